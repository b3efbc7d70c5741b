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

// Names are one namespace across kinds: a primitive whose name another kind
// already uses gets ErrWrongKind from every script, and leaves the other's
// state as it was (the scripts check the kind before they write).
func TestWrongKind(t *testing.T) {
	t.Parallel()
	redistest.RequireReal(t, redistest.Shared(t), redistest.ErrorTables)
	c := dstest.Client(t)
	ctx := context.Background()
	type kind struct {
		name   string
		create func(t *testing.T, name string) (check func() bool)
		use    func(name string) error // the kind's main call on a name of another kind
	}
	kinds := []kind{
		{"mutex", func(t *testing.T, name string) func() bool {
			m, err := c.Mutex(name)
			require.NoError(t, err)
			_, err = m.Lock(ctx)
			require.NoError(t, err)
			return func() bool { ok, err := m.IsLocked(ctx); return err == nil && ok }
		}, func(name string) error {
			m, _ := c.Mutex(name)
			_, err := m.TryLock(ctx, 0, 0)
			return err
		}},
		{"fairlock", func(t *testing.T, name string) func() bool {
			f, err := c.FairLock(name)
			require.NoError(t, err)
			_, err = f.Lock(ctx)
			require.NoError(t, err)
			return func() bool { ok, err := f.IsLocked(ctx); return err == nil && ok }
		}, func(name string) error {
			f, _ := c.FairLock(name)
			_, err := f.TryLock(ctx, 0, 0)
			return err
		}},
		{"rwlock", func(t *testing.T, name string) func() bool {
			rw, err := c.RWLock(name)
			require.NoError(t, err)
			_, err = rw.Write().Lock(ctx)
			require.NoError(t, err)
			return func() bool { ok, err := rw.Write().IsLocked(ctx); return err == nil && ok }
		}, func(name string) error {
			rw, _ := c.RWLock(name)
			_, err := rw.Read().TryLock(ctx, 0, 0)
			return err
		}},
		{"semaphore", func(t *testing.T, name string) func() bool {
			s, err := c.Semaphore(name)
			require.NoError(t, err)
			_, err = s.TrySetPermits(ctx, 3)
			require.NoError(t, err)
			return func() bool { n, err := s.Available(ctx); return err == nil && n == 3 }
		}, func(name string) error {
			s, _ := c.Semaphore(name)
			return s.TryAcquire(ctx, 1, 0)
		}},
		{"permitsemaphore", func(t *testing.T, name string) func() bool {
			s, err := c.PermitSemaphore(name)
			require.NoError(t, err)
			_, err = s.TrySetPermits(ctx, 3)
			require.NoError(t, err)
			_, err = s.TryAcquire(ctx, 0, time.Minute)
			require.NoError(t, err)
			return func() bool {
				n, err := s.Available(ctx)
				h, herr := s.Held(ctx)
				return err == nil && herr == nil && n == 2 && h == 1
			}
		}, func(name string) error {
			s, _ := c.PermitSemaphore(name)
			_, err := s.TryAcquire(ctx, 0, 0)
			return err
		}},
		{"latch", func(t *testing.T, name string) func() bool {
			l, err := c.Latch(name)
			require.NoError(t, err)
			_, err = l.TrySetCount(ctx, 2)
			require.NoError(t, err)
			return func() bool { n, err := l.Count(ctx); return err == nil && n == 2 }
		}, func(name string) error {
			l, _ := c.Latch(name)
			_, err := l.CountDown(ctx)
			return err
		}},
	}
	for _, a := range kinds {
		for _, b := range kinds {
			if a.name == b.name {
				continue
			}
			name := dstest.Name(t) + "-" + a.name + "-" + b.name
			intact := a.create(t, name)
			err := b.use(name)
			assert.ErrorIs(t, err, distsync.ErrWrongKind, "%s on a %s's name", b.name, a.name)
			assert.True(t, intact(), "the %s is untouched by the %s", a.name, b.name)
		}
	}
}

// A semaphore whose permits were never set is not full: a refusal says so.
func TestNeverSetSemaphore(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	ctx := context.Background()
	s, err := c.Semaphore(dstest.Name(t))
	require.NoError(t, err)
	err = s.TryAcquire(ctx, 1, 0)
	assert.ErrorIs(t, err, distsync.ErrNotAcquired)
	assert.ErrorIs(t, err, distsync.ErrNotSet)
	ps, err := c.PermitSemaphore(dstest.Name(t) + "-permits")
	require.NoError(t, err)
	_, err = ps.TryAcquire(ctx, 0, 0)
	assert.ErrorIs(t, err, distsync.ErrNotSet)
	require.NoError(t, ps.SetPermits(ctx, 1))
	p, err := ps.TryAcquire(ctx, 0, 0)
	require.NoError(t, err)
	_, err = ps.TryAcquire(ctx, 0, 0)
	assert.ErrorIs(t, err, distsync.ErrNotAcquired)
	assert.NotErrorIs(t, err, distsync.ErrNotSet, "full, not unset")
	require.NoError(t, ps.Release(ctx, p))
}

// The counting and the permit semaphore are two kinds: every call of one on
// the other's name returns ErrWrongKind and leaves the other as it was (its
// count, its held permits, its kind).
func TestSemaphoreKindsRefuseEachOther(t *testing.T) {
	t.Parallel()
	redistest.RequireReal(t, redistest.Shared(t), redistest.ErrorTables)
	c := dstest.Client(t)
	ctx := context.Background()
	name := dstest.Name(t)
	counting, err := c.Semaphore(name + "-counting")
	require.NoError(t, err)
	t.Cleanup(func() { counting.Delete(ctx) })
	_, err = counting.TrySetPermits(ctx, 3)
	require.NoError(t, err)
	permits, err := c.PermitSemaphore(name + "-permits")
	require.NoError(t, err)
	t.Cleanup(func() { permits.Delete(ctx) })
	_, err = permits.TrySetPermits(ctx, 3)
	require.NoError(t, err)
	p, err := permits.TryAcquire(ctx, 0, time.Minute)
	require.NoError(t, err)

	asCounting, err := c.Semaphore(permits.Name())
	require.NoError(t, err)
	asPermits, err := c.PermitSemaphore(counting.Name())
	require.NoError(t, err)
	calls := []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"Semaphore.TrySetPermits", func(ctx context.Context) error { _, err := asCounting.TrySetPermits(ctx, 1); return err }},
		{"Semaphore.SetPermits", func(ctx context.Context) error { return asCounting.SetPermits(ctx, 1) }},
		{"Semaphore.AddPermits", func(ctx context.Context) error { return asCounting.AddPermits(ctx, 5) }},
		{"Semaphore.Release", func(ctx context.Context) error { return asCounting.Release(ctx, 5) }},
		{"Semaphore.Acquire", func(ctx context.Context) error { return asCounting.Acquire(ctx, 1) }},
		{"Semaphore.TryAcquire", func(ctx context.Context) error { return asCounting.TryAcquire(ctx, 1, time.Minute) }},
		{"Semaphore.Available", func(ctx context.Context) error { _, err := asCounting.Available(ctx); return err }},
		{"Semaphore.Drain", func(ctx context.Context) error { _, err := asCounting.Drain(ctx); return err }},
		{"Semaphore.Delete", func(ctx context.Context) error { _, err := asCounting.Delete(ctx); return err }},
		{"PermitSemaphore.TrySetPermits", func(ctx context.Context) error { _, err := asPermits.TrySetPermits(ctx, 1); return err }},
		{"PermitSemaphore.SetPermits", func(ctx context.Context) error { return asPermits.SetPermits(ctx, 1) }},
		{"PermitSemaphore.AddPermits", func(ctx context.Context) error { return asPermits.AddPermits(ctx, 5) }},
		{"PermitSemaphore.Acquire", func(ctx context.Context) error { _, err := asPermits.Acquire(ctx); return err }},
		{"PermitSemaphore.TryAcquireN", func(ctx context.Context) error {
			_, err := asPermits.TryAcquireN(ctx, 2, time.Minute, time.Minute)
			return err
		}},
		{"PermitSemaphore.ReleaseID", func(ctx context.Context) error { return asPermits.ReleaseID(ctx, p.ID()) }},
		{"PermitSemaphore.Available", func(ctx context.Context) error { _, err := asPermits.Available(ctx); return err }},
		{"PermitSemaphore.Permits", func(ctx context.Context) error { _, err := asPermits.Permits(ctx); return err }},
		{"PermitSemaphore.Held", func(ctx context.Context) error { _, err := asPermits.Held(ctx); return err }},
		{"PermitSemaphore.Drain", func(ctx context.Context) error { _, err := asPermits.Drain(ctx); return err }},
		{"PermitSemaphore.Delete", func(ctx context.Context) error { _, err := asPermits.Delete(ctx); return err }},
	}
	for _, tc := range calls {
		// A bound on the blocking calls: the refusal must come at once.
		cctx, cancel := context.WithTimeout(ctx, time.Minute)
		err := tc.call(cctx)
		cancel()
		assert.ErrorIs(t, err, distsync.ErrWrongKind, tc.name)
	}

	n, err := counting.Available(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(3), n, "the counting semaphore is untouched")
	n, err = permits.Available(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(2), n, "the permit semaphore's count is untouched")
	n, err = permits.Held(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(1), n, "the permit semaphore's permit is still held")
	for s, kind := range map[string]distsync.Kind{counting.Name(): distsync.KindSemaphore, permits.Name(): distsync.KindPermitSemaphore} {
		info, err := c.Inspect(ctx, s)
		require.NoError(t, err)
		assert.Equal(t, kind, info.Kind, s)
	}
	require.NoError(t, permits.Release(ctx, p), "the permit is released by its own semaphore")
}
