package mutex_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
	"github.com/distsync/distsync/mutex"
)

// ForceLock takes a held lock in one call, with a larger fencing token; the
// replaced holder in another process learns it by push, long before its next
// renewal, and its Unlock does not release the new hold. A waiter keeps
// waiting, for the new holder.
func TestForceLock(t *testing.T) {
	t.Parallel()
	name := dstest.Name(t)
	lease := func(o *distsync.Options) { o.Watchdog.Lease = time.Minute } // renewals every 20 s
	old := newMutex(t, dstest.Client(t, lease), name)
	taker := newMutex(t, dstest.Client(t, lease), name)
	waiter := newMutex(t, dstest.Client(t, lease), name)
	ctx := context.Background()

	held, err := old.Lock(ctx)
	require.NoError(t, err)
	oldTok, err := old.Token(held)
	require.NoError(t, err)
	waited := make(chan error, 1)
	go func() {
		w, err := waiter.Lock(ctx)
		if err == nil {
			err = waiter.Unlock(w)
		}
		waited <- err
	}()
	require.Eventually(t, func() bool { n, _ := old.Waiting(ctx); return n == 1 }, 10*time.Second, time.Millisecond)
	// The holder's Client subscribes to its control channel in the
	// background from its first Lock on.
	require.Eventually(t, func() bool { return mutex.ControlUp(old) }, 10*time.Second, time.Millisecond)

	took, err := taker.ForceLock(ctx)
	require.NoError(t, err)
	tok, err := taker.Token(took)
	require.NoError(t, err)
	assert.Greater(t, tok, oldTok)
	select {
	case <-held.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the replaced holder was not told")
	}
	assert.ErrorIs(t, context.Cause(held), distsync.ErrLeaseLost)
	assert.ErrorIs(t, old.Unlock(held), distsync.ErrNotHeld)
	n, err := taker.HoldCount(took)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "the new hold is whole")

	select {
	case err := <-waited:
		t.Fatalf("the waiter did not wait for the new holder: %v", err)
	default:
	}
	require.NoError(t, taker.Unlock(took))
	select {
	case err := <-waited:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter was not woken by the new holder's release")
	}

	// On a free lock ForceLock is a lock; by the holder, a re-entry.
	f, err := taker.ForceLock(ctx)
	require.NoError(t, err)
	again, err := taker.ForceLock(f)
	require.NoError(t, err)
	n, err = taker.HoldCount(again)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	require.NoError(t, taker.Unlock(again))
	require.NoError(t, taker.Unlock(f))
	locked, err := taker.IsLocked(ctx)
	require.NoError(t, err)
	assert.False(t, locked)
}

// A ForceLock whose reply is lost returns the failure and gives back what
// it was granted: the lock is free, not held by nobody.
func TestForceLockReplyLost(t *testing.T) {
	t.Parallel()
	name := dstest.Name(t)
	c, f := dstest.FaultyClient(t, redistest.Shared(t), 0)
	m := newMutex(t, c, name)
	ctx := context.Background()
	rule := f.Inject(&dstest.Rule{Match: dstest.Script("Take the lock whoever holds it"), Fault: dstest.LoseReply, Times: 1})
	_, err := m.ForceLock(ctx)
	require.ErrorIs(t, err, dstest.ErrInjected)
	require.Equal(t, 1, rule.Hits())
	require.Eventually(t, func() bool { locked, err := m.IsLocked(ctx); return err == nil && !locked }, 10*time.Second, time.Millisecond, "given back")
}
