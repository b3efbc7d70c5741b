package integration_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
)

// Client.Close gives back every hold and permit the Client has, before it
// closes the connection: another Client gets them at once, not after a
// lease (30 s here), and their contexts end with a cause wrapping
// ErrClosed. A waiter of the closed Client returns ErrClosed and leaves
// its queue.
func TestCloseGivesBackHolds(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	eachKind(t, lockKinds, func(t *testing.T, k lockKind, c *distsync.Client, f *dstest.Faulty, l, other lockish) {
		ctx := context.Background()
		watchdog, err := l.TryLock(ctx, 0, 0)
		require.NoError(t, err)
		explicit, err := l.TryLock(watchdog, 0, time.Minute) // a re-entry with an explicit lease
		require.NoError(t, err)
		// A waiter of c, on a lock another Client holds.
		busy := k.rival(t, dstest.ClientOn(t, s), dstest.Name(t)+"-busy")
		bctx, err := busy.TryLock(ctx, 0, time.Minute)
		require.NoError(t, err)
		waiter := k.make(t, c, dstest.Name(t)+"-busy")
		observer := k.make(t, dstest.ClientOn(t, s), dstest.Name(t)+"-busy")
		waiting := func() int {
			n, err := observer.(interface {
				Waiting(context.Context) (int, error)
			}).Waiting(ctx)
			if err != nil {
				return -1
			}
			return n
		}
		before := waiting() // a waiter of an earlier run may linger until its window ends
		require.GreaterOrEqual(t, before, 0)
		waited := make(chan error, 1)
		go func() {
			_, err := waiter.TryLock(ctx, distsync.Forever, 0)
			waited <- err
		}()
		require.Eventually(t, func() bool { return waiting() > before }, 10*time.Second, time.Millisecond, "the waiter is registered")

		c.Close()
		for _, h := range []context.Context{watchdog, explicit} {
			require.Error(t, h.Err(), "the hold's context ended at Close")
			assert.ErrorIs(t, context.Cause(h), distsync.ErrClosed)
		}
		assert.ErrorIs(t, <-waited, distsync.ErrClosed, "the waiter returns ErrClosed")
		assert.Equal(t, before, waiting(), "the waiter left the queue at Close")
		freeWithin(t, other, 0, "Close gave the hold back")
		require.NoError(t, busy.Unlock(bctx))
	})
	t.Run("permit", func(t *testing.T) {
		t.Parallel()
		c, _ := faultyClient(t, s, 0)
		ps := permitSem(t, c, dstest.Name(t), 3)
		ctx := context.Background()
		p1, err := ps.TryAcquire(ctx, 0, 0)
		require.NoError(t, err)
		p2, err := ps.TryAcquire(ctx, 0, time.Minute)
		require.NoError(t, err)
		c.Close()
		for _, p := range []interface{ Context() context.Context }{p1, p2} {
			assert.ErrorIs(t, context.Cause(p.Context()), distsync.ErrClosed)
		}
		held, err := permitSem(t, dstest.ClientOn(t, s), dstest.Name(t), 3).Held(ctx)
		require.NoError(t, err)
		assert.Zero(t, held, "Close returned the permits")
	})
}

// Issue 20, defect 3: a grant whose reply lands after Close stopped waiting
// for in-flight work (core.CloseGrace) is given back with one bounded
// attempt before the connection closes, instead of being left held for a
// whole lease.
func TestGrantLandingLateInCloseIsGivenBack(t *testing.T) {
	t.Parallel()
	eachKind(t, lockKinds, func(t *testing.T, k lockKind, c *distsync.Client, f *dstest.Faulty, l, other lockish) {
		rule := f.Inject(&dstest.Rule{Match: dstest.Script(k.acquire), Fault: dstest.LateReply, Delay: 1500 * time.Millisecond, Times: 1})
		got := make(chan error, 1)
		go func() {
			_, err := l.TryLock(context.Background(), 0, 0)
			got <- err
		}()
		<-rule.Hit()
		c.Close() // its grace (1 s) ends before the grant's reply lands
		err := <-got
		if !errors.Is(err, distsync.ErrClosed) && !errors.Is(err, distsync.ErrNotAcquired) {
			t.Fatalf("TryLock during Close: %v, want ErrClosed", err)
		}
		freeWithin(t, other, 0, "the grant that landed during Close was given back")
	})
	t.Run("permit", func(t *testing.T) {
		t.Parallel()
		s := redistest.Shared(t)
		c, f := faultyClient(t, s, 0)
		ps := permitSem(t, c, dstest.Name(t), 1)
		rule := f.Inject(&dstest.Rule{Match: dstest.Script("Take n permits of the permit semaphore"), Fault: dstest.LateReply, Delay: 1500 * time.Millisecond, Times: 1})
		got := make(chan error, 1)
		go func() {
			_, err := ps.TryAcquire(context.Background(), 0, 0)
			got <- err
		}()
		<-rule.Hit()
		c.Close()
		<-got
		held, err := permitSem(t, dstest.ClientOn(t, s), dstest.Name(t), 1).Held(context.Background())
		require.NoError(t, err)
		assert.Zero(t, held, "the permit granted during Close was returned")
	})
}
