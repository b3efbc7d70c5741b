package distsync_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
)

// A name used by another kind is refused in English: "holds a mutex, not
// an election", with the article each kind takes.
func TestWrongKindArticle(t *testing.T) {
	t.Parallel()
	redistest.RequireReal(t, redistest.Shared(t), redistest.ErrorTables)
	c := dstest.Client(t)
	ctx := context.Background()

	name := dstest.Name(t)
	m, err := c.Mutex(name)
	require.NoError(t, err)
	held, err := m.Lock(ctx)
	require.NoError(t, err)
	defer m.Unlock(held)
	e, err := c.Election(name)
	require.NoError(t, err)
	_, err = e.Leader(ctx)
	require.ErrorIs(t, err, distsync.ErrWrongKind)
	assert.Contains(t, err.Error(), "holds a mutex, not an election")

	other := dstest.Name(t) + "-election"
	e, err = c.Election(other)
	require.NoError(t, err)
	lctx, _, err := e.Campaign(ctx, "v")
	require.NoError(t, err)
	defer e.Resign(lctx)
	m, err = c.Mutex(other)
	require.NoError(t, err)
	_, err = m.TryLock(ctx, 0, 0)
	require.ErrorIs(t, err, distsync.ErrWrongKind)
	assert.Contains(t, err.Error(), "holds an election, not a mutex")
	s, err := c.Semaphore(other) // the semaphores' own check
	require.NoError(t, err)
	_, err = s.TrySetPermits(ctx, 1)
	require.ErrorIs(t, err, distsync.ErrWrongKind)
	assert.Contains(t, err.Error(), "holds an election, not a semaphore")
}
