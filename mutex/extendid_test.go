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

// ExtendID of a live watchdog-renewed acquisition gives Extend's answer,
// ErrInvalidArgument (the watchdog renews it), from any Client, not
// ErrNotHeld; the hold stays as it was.
func TestExtendIDWatchdogHold(t *testing.T) {
	t.Parallel()
	name := dstest.Name(t)
	holder := newMutex(t, dstest.Client(t), name)
	other := newMutex(t, dstest.Client(t), name)
	ctx := context.Background()

	held, err := holder.Lock(ctx) // the watchdog lease
	require.NoError(t, err)
	id, err := holder.HoldID(held)
	require.NoError(t, err)

	err = holder.Extend(held, time.Minute)
	assert.ErrorIs(t, err, distsync.ErrInvalidArgument, "Extend: %v", err)
	err = holder.ExtendID(ctx, id, time.Minute)
	assert.ErrorIs(t, err, distsync.ErrInvalidArgument, "ExtendID on the holder's Client: %v", err)
	err = other.ExtendID(ctx, id, time.Minute)
	assert.ErrorIs(t, err, distsync.ErrInvalidArgument, "ExtendID on another Client: %v", err)
	assert.NotErrorIs(t, err, distsync.ErrNotHeld)

	require.NoError(t, held.Err(), "still held")
	n, err := holder.HoldCount(held)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	require.NoError(t, holder.Unlock(held))
	// Released: now it is not held, whatever its lease was.
	assert.ErrorIs(t, other.ExtendID(ctx, id, time.Minute), distsync.ErrNotHeld)
}
