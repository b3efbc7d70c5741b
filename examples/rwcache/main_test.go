package main

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

func TestMain(m *testing.M) { redistest.Main(m) }

func short(t *testing.T) config {
	return config{name: dstest.Name(t), readers: 8, duration: time.Second, refresh: 100 * time.Millisecond, slow: 10 * time.Millisecond}
}

func check(t *testing.T, res result, err error) {
	t.Helper()
	require.NoError(t, err)
	assert.Positive(t, res.hits)
	assert.Positive(t, res.refreshes)
	assert.Zero(t, res.torn, "a reader saw a half-written value")
	t.Logf("hits %d, refreshes %d, longest reader wait %v", res.hits, res.refreshes, res.longestWait)
}

func TestRun(t *testing.T) {
	t.Parallel()
	res, err := run(context.Background(), dstest.Options(redistest.Shared(t)), short(t))
	check(t, res, err)
}

// The default run, on the in-process server main starts.
func TestRunInProcess(t *testing.T) {
	t.Parallel()
	srv, err := inProcessRedis()
	require.NoError(t, err)
	defer srv.Close()
	cfg := short(t)
	cfg.duration = 2 * time.Second // the in-process server is slow under -race
	res, err := run(context.Background(), distsync.Options{Addrs: []string{srv.Addr()}, RESP2: true}, cfg)
	check(t, res, err)
}
