package integration_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync/internal/core"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
	"github.com/distsync/distsync/mutex"
)

// Fencing tokens come from one counter per hash slot, which never lapses
// (internal/core/fence.go). These tests check what that promises on real
// servers: tokens keep increasing after the old per-name counter would have
// lapsed, across restarts with and without persistence, and on a Cluster
// the counter shares its names' slot.

// fenceKey is the counter that serves m on a standalone server.
func fenceKey(m *mutex.Mutex) string { return core.FenceOf(m.Key(), false) }

// token takes m, returns the hold's token and releases it.
func token(t *testing.T, m *mutex.Mutex) int64 {
	t.Helper()
	ctx, err := m.Lock(context.Background())
	require.NoError(t, err)
	tok, err := m.Token(ctx)
	require.NoError(t, err)
	require.NoError(t, m.Unlock(ctx))
	return tok
}

// tokenAgain is token once the Client's connection is back after a
// restart: attempts that fail on the network are tried again.
func tokenAgain(t *testing.T, m *mutex.Mutex) int64 {
	t.Helper()
	var tok int64
	require.Eventually(t, func() bool {
		ctx, err := m.TryLock(context.Background(), 0, 0)
		if err != nil {
			return false
		}
		tok, err = m.Token(ctx)
		require.NoError(t, err)
		require.NoError(t, m.Unlock(ctx))
		return true
	}, time.Minute, 10*time.Millisecond)
	return tok
}

// ahead moves the counter fence far ahead of the server clock (as tokens given
// before the clock stepped back would have), keeping its expiry if it has
// one, and returns the value.
func ahead(t *testing.T, rc rueidis.Client, fence string, last int64) int64 {
	t.Helper()
	v := last + 1_000_000_000_000 // 11.6 days of microseconds
	require.NoError(t, rc.Do(context.Background(), rc.B().Set().Key(fence).Value(strconv.FormatInt(v, 10)).Keepttl().Build()).Error())
	return v
}

// Tokens keep increasing for ever, not for FenceTTL: the counter has no
// expiry, so a token given long after the last one still follows it, even
// when the last one was ahead of the clock. With per-name counters that
// lapsed after FenceTTL, the sequence restarted from the clock, below.
func TestFenceNeverLapses(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	redistest.RequireReal(t, s)
	c := dstest.ClientOn(t, s)
	rc := s.Client(t)
	m, err := c.Mutex("never-lapses")
	require.NoError(t, err)
	last := ahead(t, rc, fenceKey(m), token(t, m))

	ttl, err := rc.Do(context.Background(), rc.B().Pttl().Key(fenceKey(m)).Build()).AsInt64()
	require.NoError(t, err)
	assert.Equal(t, int64(-1), ttl, "the counter has no expiry")
	time.Sleep(150 * time.Millisecond) // three times the old FenceTTL: a per-name counter would be gone
	assert.Greater(t, token(t, m), last, "the token follows the last one, not the clock")
}

// Names share a counter (on a standalone server, one): their tokens
// interleave in one increasing sequence, and each name's tokens strictly
// increase. On a Cluster names of one slot share theirs
// (TestClusterFenceSharesSlot).
func TestFenceShared(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	redistest.RequireReal(t, s)
	c := dstest.ClientOn(t, s)
	a, err := c.Mutex("shared-a")
	require.NoError(t, err)
	b, err := c.Mutex("shared-b")
	require.NoError(t, err)
	require.Equal(t, fenceKey(a), fenceKey(b))
	interleaved(t, s.Client(t), a, b, false)
}

// interleaved checks that tokens of a and b, taken in turns, increase
// together, after the counter they share was moved ahead of the clock.
func interleaved(t *testing.T, rc rueidis.Client, a, b *mutex.Mutex, cluster bool) {
	t.Helper()
	last := ahead(t, rc, core.FenceOf(a.Key(), cluster), token(t, a))
	for i := range 10 {
		m := a
		if i%2 == 1 {
			m = b
		}
		tok := token(t, m)
		require.Greater(t, tok, last, "token %d", i)
		last = tok
	}
}

// With appendonly yes and appendfsync always, the counter survives a crash
// and restart: tokens continue from it, even when it was ahead of the clock.
// Without persistence (the next test) they continue from the clock.
func TestFenceAfterRestartAOF(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t, redistest.WithConfig("appendonly", "yes"), redistest.WithConfig("appendfsync", "always"))
	redistest.RequireProcess(t, s)
	c := dstest.ClientOn(t, s)
	m, err := c.Mutex("restart-aof")
	require.NoError(t, err)
	last := ahead(t, s.Client(t), fenceKey(m), token(t, m))

	s.Kill()
	s.Restart(t)
	require.Greater(t, tokenAgain(t, m), last, "the token follows the one before the crash")
}

// Without persistence a restart loses the counters; the next token starts
// from the server clock in microseconds, which is past every token given
// before (they were at most the clock then, plus one per token given in the
// same microsecond), unless the clock stepped back.
func TestFenceAfterRestartWithoutPersistence(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	redistest.RequireProcess(t, s)
	c := dstest.ClientOn(t, s)
	m, err := c.Mutex("restart-no-persistence")
	require.NoError(t, err)
	last := token(t, m)

	s.Restart(t)
	rc := s.Client(t)
	n, err := rc.Do(context.Background(), rc.B().Exists().Key(fenceKey(m)).Build()).AsInt64()
	require.NoError(t, err)
	require.Zero(t, n, "the restart lost the counter")
	require.Greater(t, tokenAgain(t, m), last, "the token continues from the clock")
}

// On a Cluster the counter of a name lives in the name's slot (a script may
// touch it: no CROSSSLOT), by Redis's own CLUSTER KEYSLOT, for names on
// every master; and it works there, every kind of lock taking its token
// from it.
func TestClusterFenceSharesSlot(t *testing.T) {
	t.Parallel()
	cl := redistest.StartCluster(t, 3, 0)
	c := clusterClient(t, cl)
	rc := cl.Client(t)
	ctx := context.Background()
	slot := func(key string) int64 {
		n, err := rc.Do(ctx, rc.B().ClusterKeyslot().Key(key).Build()).AsInt64()
		require.NoError(t, err)
		return n
	}
	for i := range 30 {
		m, err := c.Mutex(fmt.Sprintf("fence-slot-%d", i))
		require.NoError(t, err)
		fence := core.FenceOf(m.Key(), true)
		require.Equal(t, slot(m.Key()), slot(fence), "%s and %s", m.Key(), fence)
		first := token(t, m)
		require.Greater(t, token(t, m), first)
		v, err := rc.Do(ctx, rc.B().Get().Key(fence).Build()).AsInt64()
		require.NoError(t, err, "the counter is on the name's master")
		require.GreaterOrEqual(t, v, first)
	}
	// Two names of one slot share its counter.
	a, err := c.Mutex("fence-shared-a")
	require.NoError(t, err)
	var b *mutex.Mutex
	for i := 0; b == nil; i++ {
		if name := fmt.Sprintf("fence-shared-b%d", i); core.Slot(name) == core.Slot("fence-shared-a") {
			b, err = c.Mutex(name)
			require.NoError(t, err)
		}
	}
	interleaved(t, rc, a, b, true)
	for _, k := range dstest.Kinds {
		l, err := k.New(c, "fence-kind-"+k.Name)
		require.NoError(t, err)
		held, err := l.TryLock(ctx, 0, 0)
		require.NoError(t, err, k.Name)
		require.NoError(t, l.Unlock(held), k.Name)
	}
}
