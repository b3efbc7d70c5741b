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

// A Release after a semaphore's time to live ended does not bring it back
// (with the released permits and no expiry): it releases nothing and says
// so (ErrNotSet), and TrySetPermitsTTL then sets the permits anew. The same
// holds for a semaphore whose permits were never set.
func TestReleaseAfterTTLDoesNotRecreate(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	s := newSem(t, c, dstest.Name(t))
	rc := c.Rueidis()
	ctx := context.Background()
	exists := func() bool {
		n, err := rc.Do(ctx, rc.B().Exists().Key(s.Key()).Build()).AsInt64()
		require.NoError(t, err)
		return n == 1
	}

	err := s.Release(ctx, 1)
	assert.ErrorIs(t, err, distsync.ErrNotSet, "never set: %v", err)
	assert.False(t, exists(), "a release of a semaphore never set does not make it")

	ok, err := s.TrySetPermitsTTL(ctx, 2, time.Minute)
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, s.Acquire(ctx, 1))
	// Its time to live ends while the permit is taken.
	require.NoError(t, rc.Do(ctx, rc.B().Pexpire().Key(s.Key()).Milliseconds(1).Build()).Error())
	require.Eventually(t, func() bool { return !exists() }, 5*time.Second, time.Millisecond)

	err = s.Release(ctx, 1)
	assert.ErrorIs(t, err, distsync.ErrNotSet, "released to a semaphore that is gone: %v", err)
	assert.False(t, exists(), "not recreated")
	ok, err = s.TrySetPermitsTTL(ctx, 2, time.Minute)
	require.NoError(t, err)
	assert.True(t, ok, "set anew")
	n, err := s.Available(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(2), n)
	ms, err := rc.Do(ctx, rc.B().Pttl().Key(s.Key()).Build()).AsInt64()
	require.NoError(t, err)
	assert.Greater(t, ms, int64(50_000), "with its time to live")

	// AddPermits still sets the permits of a semaphore that has none.
	_, err = s.Delete(ctx)
	require.NoError(t, err)
	require.NoError(t, s.AddPermits(ctx, 3))
	n, err = s.Available(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(3), n)
}
