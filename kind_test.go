package distsync_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
)

// Names are one namespace across kinds: a primitive whose name another kind
// already uses gets ErrWrongKind from every script, and leaves the other's
// state as it was (the scripts check the kind before they write).
func TestWrongKind(t *testing.T) {
	t.Parallel()
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
