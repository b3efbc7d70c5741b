package distsync_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
)

// With Options.Spin, waiters never subscribe: they poll with back-off (a
// spin lock, Redisson's RSpinLock), and still get the lock once it is free.
// While a Spin waiter waits, no channel of the lock has a subscriber on the
// server; a waiter of a Client without Spin, queued behind it, has one.
func TestSpinWaitersNeverSubscribe(t *testing.T) {
	t.Parallel()
	spin := dstest.Client(t, func(o *distsync.Options) { o.Spin = distsync.Spin{Min: time.Millisecond, Max: 20 * time.Millisecond} })
	holder := dstest.Client(t)
	ctx := context.Background()
	waiterSet := map[string]string{"mutex": ":waiters", "fairlock": ":deadlines", "rwlock-write": ":wwaiters"}
	for _, kind := range dstest.Kinds {
		t.Run(kind.Name, func(t *testing.T) {
			name := dstest.Name(t)
			h, err := kind.New(holder, name)
			require.NoError(t, err)
			w, err := kind.New(spin, name)
			require.NoError(t, err)
			held, err := h.TryLock(ctx, 0, 0)
			require.NoError(t, err)
			got := make(chan error, 2)
			wait := func(l distsync.Locker) {
				wctx, err := l.TryLock(ctx, 10*time.Second, 0)
				if err == nil {
					err = l.Unlock(wctx)
				}
				got <- err
			}
			// The waiter registers (a fair queue keeps its place) but no
			// channel of the lock is subscribed to.
			go wait(w)
			dstest.WaitWaiters(t, holder, w.Key()+waiterSet[kind.Name], 1)
			assert.Empty(t, channels(t, holder, w.Key()), "no subscription while a Spin waiter waits")
			// A waiter without Spin subscribes before it registers.
			go wait(h)
			dstest.WaitWaiters(t, holder, w.Key()+waiterSet[kind.Name], 2)
			assert.NotEmpty(t, channels(t, holder, w.Key()), "a waiter without Spin subscribes")
			require.NoError(t, h.Unlock(held))
			require.NoError(t, <-got, "the spinning waiter gets the lock")
			require.NoError(t, <-got)
			assert.Zero(t, spin.Stats().NotifierMessages)
		})
	}
	_, err := distsync.New(distsync.Options{Spin: distsync.Spin{Min: time.Second, Max: time.Millisecond}})
	assert.ErrorIs(t, err, distsync.ErrInvalidArgument)
}

// channels returns the pub/sub channels with a subscriber on the server
// whose names start with prefix (every channel of a primitive starts with
// its key).
func channels(t *testing.T, c *distsync.Client, prefix string) []string {
	t.Helper()
	rc := c.Rueidis()
	all, err := rc.Do(context.Background(), rc.B().PubsubChannels().Build()).AsStrSlice()
	require.NoError(t, err)
	var mine []string
	for _, ch := range all {
		if strings.HasPrefix(ch, prefix) {
			mine = append(mine, ch)
		}
	}
	return mine
}

// Spin is a choice of the call too (WithSpin, as Redisson's getSpinLock is
// per lock): on a Client that subscribes, a call made with WithSpin polls
// and never subscribes; on a Client that spins, WithSpin(ctx, Spin{})
// subscribes. Both get the lock once it is free.
func TestSpinPerCall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	spinning := distsync.WithSpin(ctx, distsync.Spin{Max: 20 * time.Millisecond})
	subscribing := distsync.WithSpin(ctx, distsync.Spin{})
	for _, tc := range []struct {
		name      string
		client    *distsync.Client
		ctx       context.Context
		subscribe bool
	}{
		{"spin on a subscribing Client", dstest.Client(t), spinning, false},
		{"subscribe on a spinning Client", dstest.Client(t, func(o *distsync.Options) { o.Spin = distsync.Spin{Max: time.Second} }), subscribing, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := dstest.Name(t)
			holder, err := dstest.Client(t).Mutex(name)
			require.NoError(t, err)
			w, err := tc.client.Mutex(name)
			require.NoError(t, err)
			held, err := holder.TryLock(ctx, 0, 0)
			require.NoError(t, err)
			got := make(chan error, 1)
			go func() {
				wctx, err := w.TryLock(tc.ctx, 10*time.Second, 0)
				if err == nil {
					err = w.Unlock(wctx)
				}
				got <- err
			}()
			dstest.WaitWaiters(t, tc.client, w.Key()+":waiters", 1)
			assert.Equal(t, tc.subscribe, len(channels(t, tc.client, w.Key())) > 0, "subscribed")
			require.NoError(t, holder.Unlock(held))
			require.NoError(t, <-got, "the waiter gets the lock")
		})
	}
	// A bad Spin is the error of the calls made with it, with or without
	// a wait, and nothing is held.
	m, err := dstest.Client(t).Mutex(dstest.Name(t) + "-bad")
	require.NoError(t, err)
	for _, bad := range []distsync.Spin{{Min: -1}, {Max: -1}, {Min: time.Second, Max: time.Millisecond}} {
		for _, wait := range []time.Duration{0, time.Second} {
			_, err := m.TryLock(distsync.WithSpin(ctx, bad), wait, 0)
			assert.ErrorIs(t, err, distsync.ErrInvalidArgument, "%+v, wait %v", bad, wait)
		}
	}
	locked, err := m.IsLocked(ctx)
	require.NoError(t, err)
	assert.False(t, locked)
}
