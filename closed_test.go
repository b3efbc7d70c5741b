package distsync_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
)

// Every call on a closed Client returns an error wrapping ErrClosed (never
// the connection's own "closing" text), including the release of a hold
// taken before Close.
func TestEveryCallAfterCloseIsErrClosed(t *testing.T) {
	t.Parallel()
	s := dstest.Client(t) // another Client on the same server
	c, err := distsync.New(dstest.Options(redistest.Shared(t)))
	require.NoError(t, err)
	ctx := context.Background()
	name := dstest.Name(t)
	m, err := c.Mutex(name + "-m")
	require.NoError(t, err)
	f, err := c.FairLock(name + "-f")
	require.NoError(t, err)
	rw, err := c.RWLock(name + "-rw")
	require.NoError(t, err)
	sem, err := c.Semaphore(name + "-s")
	require.NoError(t, err)
	ps, err := c.PermitSemaphore(name + "-p")
	require.NoError(t, err)
	l, err := c.Latch(name + "-l")
	require.NoError(t, err)
	_, err = ps.TrySetPermits(ctx, 2)
	require.NoError(t, err)
	held, err := m.Lock(ctx)
	require.NoError(t, err)
	permit, err := ps.Acquire(ctx)
	require.NoError(t, err)
	c.Close()

	calls := map[string]error{}
	e := func(name string, err error) { calls[name] = err }
	e2 := func(name string) func(any, error) { return func(_ any, err error) { calls[name] = err } }
	e("mutex.Unlock(held)", m.Unlock(held))
	_, err = m.Lock(ctx)
	e("mutex.Lock", err)
	_, err = m.TryLock(ctx, 0, time.Second)
	e("mutex.TryLock", err)
	e2("mutex.IsLocked")(m.IsLocked(ctx))
	e2("mutex.HoldCount")(m.HoldCount(held))
	e2("mutex.TTL")(m.TTL(ctx))
	e2("mutex.ForceUnlock")(m.ForceUnlock(ctx))
	e("mutex.Extend", m.Extend(held, time.Second))
	_, err = f.Lock(ctx)
	e("fairlock.Lock", err)
	e2("fairlock.Waiting")(f.Waiting(ctx))
	e2("fairlock.TTL")(f.TTL(ctx))
	_, err = rw.Read().Lock(ctx)
	e("rwlock.Read.Lock", err)
	_, err = rw.Write().TryLock(ctx, 0, 0)
	e("rwlock.Write.TryLock", err)
	e2("rwlock.Read.Holders")(rw.Read().Holders(ctx))
	e("semaphore.Acquire", sem.Acquire(ctx, 1))
	e("semaphore.TryAcquire", sem.TryAcquire(ctx, 1, 0))
	e("semaphore.Release", sem.Release(ctx, 1))
	e2("semaphore.Available")(sem.Available(ctx))
	e2("semaphore.Drain")(sem.Drain(ctx))
	e("semaphore.AddPermits", sem.AddPermits(ctx, 1))
	e("semaphore.SetPermits", sem.SetPermits(ctx, 1))
	e2("semaphore.TrySetPermits")(sem.TrySetPermits(ctx, 1))
	e2("semaphore.Delete")(sem.Delete(ctx))
	e2("permit.Acquire")(ps.Acquire(ctx))
	e2("permit.TryAcquireN")(ps.TryAcquireN(ctx, 2, 0, 0))
	e("permit.Release", ps.Release(ctx, permit))
	e("permit.ReleaseID", ps.ReleaseID(ctx, permit.ID()))
	e2("permit.Permits")(ps.Permits(ctx))
	e2("permit.Held")(ps.Held(ctx))
	e2("permit.TTL")(permit.TTL(ctx))
	e("permit.Extend", permit.Extend(ctx, time.Second))
	e2("latch.TrySetCount")(l.TrySetCount(ctx, 1))
	e2("latch.CountDown")(l.CountDown(ctx))
	e2("latch.Count")(l.Count(ctx))
	e("latch.Await", l.Await(ctx))
	e2("latch.Delete")(l.Delete(ctx))
	for call, err := range calls {
		assert.ErrorIs(t, err, distsync.ErrClosed, call)
	}
	// What Close left held expires by itself; free it for the next run.
	other, err := s.Mutex(name + "-m")
	require.NoError(t, err)
	ok, err := other.ForceUnlock(ctx)
	require.NoError(t, err)
	assert.True(t, ok)
	sp, err := s.PermitSemaphore(name + "-p")
	require.NoError(t, err)
	require.NoError(t, sp.ReleaseID(ctx, permit.ID()))
}
