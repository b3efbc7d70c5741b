package semaphore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
)

// A semaphore set with a time to live lives that long after each use, and
// disappears when nobody uses it: its permits are then set anew.
func TestTrySetPermitsTTL(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	s := newSem(t, c, dstest.Name(t))
	rc := c.Rueidis()
	ctx := context.Background()
	pttl := func() time.Duration {
		ms, err := rc.Do(ctx, rc.B().Pttl().Key(s.Key()).Build()).AsInt64()
		require.NoError(t, err)
		return time.Duration(ms) * time.Millisecond
	}
	shorten := func() {
		require.NoError(t, rc.Do(ctx, rc.B().Pexpire().Key(s.Key()).Milliseconds(5000).Build()).Error())
	}

	ok, err := s.TrySetPermitsTTL(ctx, 2, time.Minute)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Greater(t, pttl(), 50*time.Second)
	ok, err = s.TrySetPermitsTTL(ctx, 5, time.Minute)
	require.NoError(t, err)
	assert.False(t, ok, "set already")

	// Every use starts the time to live again.
	for _, use := range []struct {
		what string
		do   func() error
	}{
		{"Acquire", func() error { return s.Acquire(ctx, 1) }},
		{"Release", func() error { return s.Release(ctx, 1) }},
		{"AddPermits", func() error { return s.AddPermits(ctx, 1) }},
		{"SetPermits", func() error { return s.SetPermits(ctx, 2) }},
		{"Drain", func() error { _, err := s.Drain(ctx); return err }},
	} {
		shorten()
		require.NoError(t, use.do(), use.what)
		assert.Greater(t, pttl(), 50*time.Second, "%s starts the time to live again", use.what)
	}
	// A refused attempt is no use.
	shorten()
	assert.ErrorIs(t, s.TryAcquire(ctx, 1, 0), distsync.ErrNotAcquired)
	assert.LessOrEqual(t, pttl(), 5*time.Second)

	// Unused, it disappears; its permits are then set anew.
	require.NoError(t, s.SetPermits(ctx, 1))
	require.NoError(t, rc.Do(ctx, rc.B().Pexpire().Key(s.Key()).Milliseconds(1).Build()).Error())
	require.Eventually(t, func() bool { return pttl() < 0 }, 5*time.Second, time.Millisecond)
	ok, err = s.TrySetPermits(ctx, 3)
	require.NoError(t, err)
	require.True(t, ok, "set anew")
	assert.Equal(t, -time.Millisecond, pttl(), "set anew without a time to live: none")
	n, err := s.Available(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(3), n)

	_, err = s.TrySetPermitsTTL(ctx, 1, 0)
	assert.ErrorIs(t, err, distsync.ErrInvalidArgument)
	require.NoError(t, s.Acquire(ctx, 1))
	assert.Equal(t, -time.Millisecond, pttl(), "no time to live: a use sets none")
}
