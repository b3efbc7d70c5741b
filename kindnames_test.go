package distsync_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
)

// One set of kind names: what the observer is told of an acquisition is
// what Inspect says of the name while it is held, with the read-write
// lock's side apart, and a latch is KindLatch.
func TestOneSetOfKinds(t *testing.T) {
	c, r := observed(t)
	ctx := context.Background()
	name := dstest.Name(t)
	type hold struct {
		kind distsync.Kind
		side string
		name string
		take func(name string) (release func())
	}
	lock := func(l distsync.Locker, err error) func() {
		require.NoError(t, err)
		h, err := l.TryLock(ctx, 0, 0)
		require.NoError(t, err)
		return func() { require.NoError(t, l.Unlock(h)) }
	}
	holds := []hold{
		{distsync.KindMutex, "", name + "-m", func(n string) func() { return lock(c.Mutex(n)) }},
		{distsync.KindFairLock, "", name + "-f", func(n string) func() { return lock(c.FairLock(n)) }},
		{distsync.KindRWLock, distsync.SideRead, name + "-rw", func(n string) func() {
			rw, err := c.RWLock(n)
			return lock(rw.Read(), err)
		}},
		{distsync.KindRWLock, distsync.SideWrite, name + "-rw", func(n string) func() {
			rw, err := c.RWLock(n)
			return lock(rw.Write(), err)
		}},
		{distsync.KindSemaphore, "", name + "-s", func(n string) func() {
			s, err := c.Semaphore(n)
			require.NoError(t, err)
			_, err = s.TrySetPermits(ctx, 1)
			require.NoError(t, err)
			require.NoError(t, s.Acquire(ctx, 1))
			return func() { require.NoError(t, s.Release(ctx, 1)) }
		}},
		{distsync.KindPermitSemaphore, "", name + "-p", func(n string) func() {
			s, err := c.PermitSemaphore(n)
			require.NoError(t, err)
			require.NoError(t, s.SetPermits(ctx, 1))
			p, err := s.Acquire(ctx)
			require.NoError(t, err)
			return func() { require.NoError(t, s.Release(ctx, p)) }
		}},
		{distsync.KindElection, "", name + "-e", func(n string) func() {
			e, err := c.Election(n)
			require.NoError(t, err)
			lead, _, err := e.Campaign(ctx, "")
			require.NoError(t, err)
			return func() { require.NoError(t, e.Resign(lead)) }
		}},
	}
	for i, h := range holds {
		release := h.take(h.name)
		info, err := c.Inspect(ctx, h.name)
		require.NoError(t, err)
		release()
		got := r.calls().acquired
		require.Len(t, got, i+1)
		a := got[i]
		assert.Equal(t, h.kind, a.Kind, "the observer's kind of %s", h.name)
		assert.Equal(t, h.side, a.Side, "the observer's side of %s", h.name)
		assert.Equal(t, a.Kind, info.Kind, "Inspect's kind of %s is the observer's", h.name)
		if h.side != "" {
			assert.Equal(t, h.side, info.Mode, "Inspect's mode of %s is the observer's side", h.name)
		}
	}
	var released []distsync.Kind
	for _, rel := range r.calls().released {
		released = append(released, rel.Kind)
	}
	assert.Equal(t, []distsync.Kind{distsync.KindMutex, distsync.KindFairLock, distsync.KindRWLock, distsync.KindRWLock, distsync.KindPermitSemaphore, distsync.KindElection}, released,
		"releases of locks, permits and leaderships, with the acquisitions' kinds")

	l, err := c.Latch(name + "-l")
	require.NoError(t, err)
	_, err = l.TrySetCount(ctx, 1)
	require.NoError(t, err)
	t.Cleanup(func() { l.Delete(ctx) })
	info, err := c.Inspect(ctx, l.Name())
	require.NoError(t, err)
	assert.Equal(t, distsync.KindLatch, info.Kind)
}
