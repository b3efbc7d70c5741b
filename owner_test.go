package distsync_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
)

// Goroutines given a hold's context share the hold (they re-enter); with
// NewOwner each contends as an owner of its own, and cannot release the
// holds of the context it came from.
func TestNewOwner(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	m, err := c.Mutex(dstest.Name(t))
	require.NoError(t, err)
	ctx := context.Background()
	held, err := m.Lock(ctx)
	require.NoError(t, err)

	var wg sync.WaitGroup
	shared := make([]error, 3)
	for i := range shared {
		wg.Add(1)
		go func() {
			defer wg.Done()
			inner, err := m.TryLock(held, 0, 0)
			if err == nil {
				err = m.Unlock(inner)
			}
			shared[i] = err
		}()
	}
	wg.Wait()
	for _, err := range shared {
		assert.NoError(t, err, "the hold's context re-enters")
	}

	own := distsync.NewOwner(held)
	got, err := m.TryLock(own, 0, 0)
	require.ErrorIs(t, err, distsync.ErrNotAcquired, "a new owner contends")
	assert.Equal(t, own, got, "a failed acquisition returns the context it was given")
	assert.ErrorIs(t, m.Unlock(own), distsync.ErrNotHeld, "a new owner cannot release the hold it came from")
	require.NoError(t, held.Err())

	// It keeps the values and the cancellation of the context it came from.
	type key struct{}
	vctx, cancel := context.WithCancel(context.WithValue(ctx, key{}, "v"))
	own = distsync.NewOwner(vctx)
	assert.Equal(t, "v", own.Value(key{}))
	cancel()
	assert.Error(t, own.Err())

	require.NoError(t, m.Unlock(held))
	waiting, err := m.TryLock(distsync.NewOwner(ctx), time.Second, 0)
	require.NoError(t, err)
	require.NoError(t, m.Unlock(waiting))
}

// The context Lock returns keeps the values of the one it was given and
// carries the owner, also one Lock made; contexts derived from it end with
// it, with its cause.
func TestHoldContextCarriesValuesAndOwner(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	m, err := c.Mutex(dstest.Name(t))
	require.NoError(t, err)
	type key struct{}
	held, err := m.Lock(context.WithValue(context.Background(), key{}, "v"))
	require.NoError(t, err)
	assert.Equal(t, "v", held.Value(key{}))
	child, cancel := context.WithCancel(held)
	defer cancel()

	again, err := m.TryLock(child, 0, 0)
	require.NoError(t, err, "a context derived from the hold's re-enters")
	n, err := m.HoldCount(again)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	require.NoError(t, m.Unlock(again))
	require.NoError(t, child.Err(), "the re-entry's release does not end the hold")

	require.NoError(t, m.Unlock(held))
	assert.ErrorIs(t, child.Err(), context.Canceled)
	assert.ErrorIs(t, context.Cause(child), distsync.ErrReleased)
	n, err = m.HoldCount(held)
	require.NoError(t, err, "the ended context still carries the owner")
	assert.Zero(t, n)
	assert.Contains(t, fmt.Sprint(held), ".WithCancel.WithValue(distsync acquisition ", "it prints as a context")
}

// TryLock(ctx, Forever, lease) is a blocking lock with an explicit lease
// (Redisson's lock(leaseTime)): it waits as long as it takes, then holds for
// the lease, unrenewed.
func TestBlockingLockWithLease(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	m, err := c.Mutex(dstest.Name(t))
	require.NoError(t, err)
	ctx := context.Background()
	held, err := m.Lock(ctx)
	require.NoError(t, err)
	got := make(chan context.Context, 1)
	go func() {
		lctx, err := m.TryLock(ctx, distsync.Forever, 300*time.Millisecond)
		assert.NoError(t, err)
		got <- lctx
	}()
	dstest.WaitWaiters(t, c, m.Key()+":waiters", 1)
	require.NoError(t, m.Unlock(held))
	lctx := <-got
	require.NotNil(t, lctx)
	<-lctx.Done()
	assert.ErrorIs(t, context.Cause(lctx), distsync.ErrLeaseExpired, "the explicit lease ends it")
	_, err = m.TryLock(ctx, -2, 0)
	assert.ErrorIs(t, err, distsync.ErrInvalidArgument, "a negative wait other than Forever")
}
