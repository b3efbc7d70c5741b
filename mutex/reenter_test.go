package mutex_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
)

// countingClient returns a Client whose lock and unlock scripts are
// counted, and the two counters.
func countingClient(t *testing.T, lease ...time.Duration) (*distsync.Client, *dstest.Rule, *dstest.Rule) {
	t.Helper()
	rc, err := rueidis.NewClient(redistest.Shared(t).ClientOption())
	require.NoError(t, err)
	f := dstest.NewFaulty(rc)
	var opts distsync.Options
	if len(lease) > 0 {
		opts.Lease = lease[0]
	}
	c, err := distsync.FromClient(f, opts)
	require.NoError(t, err)
	t.Cleanup(func() {
		c.Close()
		rc.Close()
	})
	nop := func() {}
	locks := f.Inject(&dstest.Rule{Match: dstest.Script("Acquire or re-enter the reentrant lock"), Fault: dstest.Hook, Then: nop})
	unlocks := f.Inject(&dstest.Rule{Match: dstest.Script("Release one acquisition, by its id"), Fault: dstest.Hook, Then: nop})
	return c, locks, unlocks
}

// A re-entry with the watchdog lease, by an owner that holds with the
// watchdog lease on this Client, makes no round trip, and neither does its
// Unlock while the outer hold lives; the hold count and the token are the
// hold's, and the lock is held until the last Unlock, whatever the order.
func TestReentryMakesNoRoundTrip(t *testing.T) {
	t.Parallel()
	for _, innerFirst := range []bool{true, false} {
		c, locks, unlocks := countingClient(t)
		other := dstest.Client(t)
		name := dstest.Name(t)
		m, rival := newMutex(t, c, name), newMutex(t, other, name)
		// Both on the owner's context: the inner one is not derived from
		// the outer one's (whose end would release it).
		owner := distsync.NewOwner(context.Background())
		outer, err := m.Lock(owner)
		require.NoError(t, err)
		require.Equal(t, 1, locks.Hits())

		inner, err := m.Lock(owner)
		require.NoError(t, err)
		assert.Equal(t, 1, locks.Hits(), "the re-entry made no round trip")
		n, err := m.HoldCount(inner)
		require.NoError(t, err)
		assert.Equal(t, 2, n)
		outerTok, err := m.Token(outer)
		require.NoError(t, err)
		innerTok, err := m.Token(inner)
		require.NoError(t, err)
		assert.Equal(t, outerTok, innerTok, "a re-entry keeps the hold's token")

		first, last := outer, inner
		if innerFirst {
			first, last = inner, outer
		}
		require.NoError(t, m.Unlock(first))
		assert.Equal(t, 0, unlocks.Hits(), "the first unlock made no round trip")
		assert.ErrorIs(t, context.Cause(first), distsync.ErrReleased)
		assert.NoError(t, last.Err(), "the other acquisition is still held")
		assert.ErrorIs(t, m.Unlock(first), distsync.ErrNotHeld, "released once")
		n, err = m.HoldCount(last)
		require.NoError(t, err)
		assert.Equal(t, 1, n)
		_, err = rival.TryLock(context.Background(), 0, 0)
		require.ErrorIs(t, err, distsync.ErrNotAcquired, "still held for the other acquisition")

		require.NoError(t, m.Unlock(last))
		assert.Equal(t, 1, unlocks.Hits(), "the last unlock released on the server")
		locked, err := m.IsLocked(context.Background())
		require.NoError(t, err)
		assert.False(t, locked)
		rctx, err := rival.TryLock(context.Background(), 0, 0)
		require.NoError(t, err)
		require.NoError(t, rival.Unlock(rctx))
	}
}

// A re-entry the Client cannot make alone goes to the server: one with an
// explicit lease, or by an owner that holds with an explicit lease only.
func TestReentryWithALeaseAsksTheServer(t *testing.T) {
	t.Parallel()
	c, locks, _ := countingClient(t)
	m := newMutex(t, c, dstest.Name(t))
	outer, err := m.Lock(context.Background())
	require.NoError(t, err)
	inner, err := m.TryLock(outer, 0, time.Minute)
	require.NoError(t, err)
	assert.Equal(t, 2, locks.Hits())
	require.NoError(t, m.Unlock(inner))
	require.NoError(t, m.Unlock(outer))

	explicit, err := m.TryLock(context.Background(), 0, time.Minute)
	require.NoError(t, err)
	again, err := m.Lock(explicit)
	require.NoError(t, err)
	assert.Equal(t, 4, locks.Hits())
	n, err := m.HoldCount(again)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	require.NoError(t, m.Unlock(again))
	require.NoError(t, m.Unlock(explicit))
}

// The record a re-entry shares is renewed while any acquisition sharing it
// lives, also after the one that made it was unlocked, and every
// acquisition sharing it ends when its lease is lost.
func TestSharedRecordIsRenewedAndLostTogether(t *testing.T) {
	t.Parallel()
	const lease = 600 * time.Millisecond
	c, _, unlocks := countingClient(t, lease)
	name := dstest.Name(t)
	m, rival := newMutex(t, c, name), newMutex(t, dstest.Client(t), name)
	owner := distsync.NewOwner(context.Background())
	first, err := m.Lock(owner)
	require.NoError(t, err)
	second, err := m.Lock(owner)
	require.NoError(t, err)
	require.NoError(t, m.Unlock(first))
	assert.Equal(t, 0, unlocks.Hits())
	time.Sleep(3 * lease) // past the lease: only renewals keep the lock
	require.NoError(t, second.Err())
	_, err = rival.TryLock(context.Background(), 0, 0)
	require.ErrorIs(t, err, distsync.ErrNotAcquired, "the shared record is renewed")

	third, err := m.Lock(owner)
	require.NoError(t, err)
	_, err = rival.ForceUnlock(context.Background())
	require.NoError(t, err)
	for _, ctx := range []context.Context{second, third} {
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Second):
			t.Fatal("a re-entry outlived its lost lease")
		}
		assert.ErrorIs(t, context.Cause(ctx), distsync.ErrLeaseLost)
	}
}
