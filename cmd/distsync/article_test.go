package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync/internal/dstest"
)

// The command names an election with its article: "not an election",
// "is an election", as every other kind with its own.
func TestCommandKindArticle(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	ctx := context.Background()
	name := dstest.Name(t)
	e, err := c.Election(name)
	require.NoError(t, err)
	lctx, _, err := e.Campaign(ctx, "v")
	require.NoError(t, err)
	defer e.Resign(lctx)

	code, _, errOut := invoke(t, "", "inspect", "--kind", "mutex", name)
	assert.Equal(t, exitState, code)
	assert.Contains(t, errOut, "holds an election, not a mutex")
	code, _, errOut = invoke(t, "", "delete", "--yes", name)
	assert.Equal(t, exitState, code)
	assert.Contains(t, errOut, "is an election: delete takes")

	mname := name + "-mutex"
	lockIn(t, c, mname)
	code, _, errOut = invoke(t, "", "inspect", "--kind", "election", mname)
	assert.Equal(t, exitState, code)
	assert.Contains(t, errOut, "holds a mutex, not an election")
}
