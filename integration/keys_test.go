package integration_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/core"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
)

// After a full run over every primitive, with waiters, re-entry and
// downgrades, released holds, deleted semaphores and latches and an
// election whose leaders resigned leave no key behind but finished marks,
// which expire by themselves, the election's last term, kept a minute, and
// the fencing counter, which never lapses (one on a standalone server,
// whatever the number of names).
func TestNoKeysLeftAfterFullRun(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	a, b := dstest.ClientOn(t, s), dstest.ClientOn(t, s)
	ctx := context.Background()

	for _, k := range dstest.Kinds {
		var ls []distsync.Locker
		for g := range 6 {
			c := a
			if g%2 == 1 {
				c = b
			}
			l, err := k.New(c, "full-"+k.Name)
			require.NoError(t, err)
			ls = append(ls, l)
		}
		dstest.Contend(t, ls, 5, time.Minute)
	}

	rw, err := a.RWLock("full-rw")
	require.NoError(t, err)
	w, err := rw.Write().Lock(ctx)
	require.NoError(t, err)
	r, err := rw.Read().Lock(w) // downgrade
	require.NoError(t, err)
	require.NoError(t, rw.Write().Unlock(w))
	r2, err := rw.Read().Lock(r) // re-entry
	require.NoError(t, err)
	require.NoError(t, rw.Read().Unlock(r2))
	require.NoError(t, rw.Read().Unlock(r))

	sem, err := a.Semaphore("full-sem")
	require.NoError(t, err)
	_, err = sem.TrySetPermits(ctx, 2)
	require.NoError(t, err)
	require.NoError(t, sem.Acquire(ctx, 2))
	err = sem.TryAcquire(ctx, 1, 10*time.Millisecond) // a waiter that gives up
	require.ErrorIs(t, err, distsync.ErrNotAcquired)
	require.NoError(t, sem.Release(ctx, 2))
	_, err = sem.Delete(ctx)
	require.NoError(t, err)

	ps, err := b.PermitSemaphore("full-permits")
	require.NoError(t, err)
	_, err = ps.TrySetPermits(ctx, 1)
	require.NoError(t, err)
	p, err := ps.Acquire(ctx)
	require.NoError(t, err)
	_, err = ps.TryAcquire(ctx, 10*time.Millisecond, 0)
	require.ErrorIs(t, err, distsync.ErrNotAcquired)
	require.NoError(t, ps.Release(ctx, p))
	_, err = ps.Delete(ctx)
	require.NoError(t, err)

	l, err := a.Latch("full-latch")
	require.NoError(t, err)
	_, err = l.TrySetCount(ctx, 1)
	require.NoError(t, err)
	_, err = l.CountDown(ctx)
	require.NoError(t, err)
	require.NoError(t, l.Await(ctx))
	_, err = l.Delete(ctx)
	require.NoError(t, err)

	ea, err := a.Election("full-election")
	require.NoError(t, err)
	eb, err := b.Election("full-election")
	require.NoError(t, err)
	lead, _, err := ea.Campaign(ctx, "a")
	require.NoError(t, err)
	next := dstest.CampaignAsync(eb, ctx, "b")
	dstest.AwaitCandidates(t, ea, 1)
	require.NoError(t, ea.Resign(lead)) // hands the leadership to b
	require.NoError(t, eb.Resign(dstest.Elected(t, next, time.Minute, "the candidate").Lead))

	rc := s.Client(t)
	keys, err := rc.Do(ctx, rc.B().Keys().Pattern("*").Build()).AsStrSlice()
	require.NoError(t, err)
	for _, k := range keys {
		ttl, err := rc.Do(ctx, rc.B().Pttl().Key(k).Build()).AsInt64()
		require.NoError(t, err)
		if k == "distsync:fence" {
			assert.Equal(t, int64(-1), ttl, "%s: the counter never lapses", k)
			continue
		}
		assert.Positive(t, ttl, "%s must expire by itself", k)
		if strings.HasSuffix(k, ":done") || strings.Contains(k, ":done:") {
			// The record of finished acquisitions (the mutex's marks, one
			// per acquisition), so that a retried release is recognised:
			// short-lived.
			assert.LessOrEqual(t, ttl, core.ReleaseMemory.Milliseconds(), "%s", k)
			continue
		}
		if strings.HasSuffix(k, ":last") {
			// The election's last term, for Observe's "nobody leads"
			// state: kept a minute once the leadership ended.
			assert.LessOrEqual(t, ttl, time.Minute.Milliseconds(), "%s", k)
			continue
		}
		t.Errorf("key left behind: %s", k)
	}
	assert.NotEmpty(t, keys, "the fencing counter of the locks taken")
}
