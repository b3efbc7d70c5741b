package mutex_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
)

// A hold's ID, given to another process (another Client), releases exactly
// that acquisition, once, and extends its explicit lease.
func TestHoldIDAcrossClients(t *testing.T) {
	t.Parallel()
	name := dstest.Name(t)
	hc := dstest.Client(t)
	holder := newMutex(t, hc, name)
	other := newMutex(t, dstest.Client(t), name)
	ctx := context.Background()

	held, err := holder.TryLock(ctx, 0, 2*time.Second)
	require.NoError(t, err)
	dstest.WaitControl(t, hc)
	again, err := holder.Lock(held) // a re-entry: another acquisition of the hold
	require.NoError(t, err)
	id, err := holder.HoldID(held)
	require.NoError(t, err)
	id2, err := holder.HoldID(again)
	require.NoError(t, err)
	assert.NotEqual(t, id, id2, "one ID per acquisition")

	require.NoError(t, other.ExtendID(ctx, id, time.Minute))
	ttl, err := other.TTL(ctx)
	require.NoError(t, err)
	assert.Greater(t, ttl, 30*time.Second, "extended by the other Client")

	assert.ErrorIs(t, other.ExtendID(ctx, id2, time.Minute), distsync.ErrInvalidArgument, "the watchdog renews it")

	// The inner acquisition, from another Client: the holder is told by
	// push, and its own Unlock released nothing.
	require.NoError(t, other.UnlockID(ctx, id2))
	n, err := holder.HoldCount(held)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "only that acquisition was released")
	<-again.Done()
	assert.ErrorIs(t, context.Cause(again), distsync.ErrLeaseLost)
	require.NoError(t, held.Err())
	assert.ErrorIs(t, other.UnlockID(ctx, id2), distsync.ErrNotHeld, "released before")
	assert.ErrorIs(t, other.ExtendID(ctx, id2, time.Minute), distsync.ErrNotHeld)
	assert.ErrorIs(t, holder.Unlock(again), distsync.ErrNotHeld)

	// Through the holder's own Client, its context ends at once.
	require.NoError(t, holder.UnlockID(ctx, id))
	assert.ErrorIs(t, context.Cause(held), distsync.ErrReleased)
	locked, err := holder.IsLocked(ctx)
	require.NoError(t, err)
	assert.False(t, locked)

	assert.ErrorIs(t, other.UnlockID(ctx, "no-at-sign"), distsync.ErrInvalidArgument)
	assert.ErrorIs(t, other.ExtendID(ctx, id, 0), distsync.ErrInvalidArgument)
	_, err = holder.HoldID(ctx)
	assert.ErrorIs(t, err, distsync.ErrNotHeld)
}
