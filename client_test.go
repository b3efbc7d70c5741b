package distsync_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
	"github.com/distsync/distsync/watchdog"
)

func TestFromClientLeavesCallersClientOpen(t *testing.T) {
	s := redistest.Shared(t)
	rc, err := rueidis.NewClient(s.ClientOption())
	require.NoError(t, err)
	defer rc.Close()
	c, err := distsync.FromClient(rc, distsync.Options{Prefix: "fromclient:"})
	require.NoError(t, err)
	m, err := c.Mutex("x")
	require.NoError(t, err)
	assert.Equal(t, "fromclient:{x}", m.Key())
	held, err := m.Lock(context.Background())
	require.NoError(t, err)
	require.NoError(t, m.Unlock(held))
	c.Close()
	c.Close() // idempotent
	assert.NoError(t, rc.Do(context.Background(), rc.B().Ping().Build()).Error(), "the caller's client stays open")
	_, err = m.Lock(context.Background())
	assert.ErrorIs(t, err, distsync.ErrClosed)
}

func TestClientsHaveDistinctIDs(t *testing.T) {
	a, b := dstest.Client(t), dstest.Client(t)
	assert.NotEqual(t, a.ID(), b.ID())
	host, _ := os.Hostname()
	assert.Regexp(t, `^[A-Za-z0-9._-]+-`+strconv.Itoa(os.Getpid())+`/[A-Za-z0-9_-]{16}$`, a.ID(), "<host>-<pid>/<random id> (host %q)", host)
	named := dstest.Client(t, func(o *distsync.Options) { o.ClientName = "billing worker:7 {eu}" })
	assert.Regexp(t, `^billing_worker_7__eu_/[A-Za-z0-9_-]{16}$`, named.ID())
	m, err := named.Mutex(dstest.Name(t))
	require.NoError(t, err)
	held, err := m.Lock(context.Background())
	require.NoError(t, err)
	defer m.Unlock(held)
	rc := named.Rueidis()
	fields, err := rc.Do(context.Background(), rc.B().Hkeys().Key(m.Key()).Build()).AsStrSlice()
	require.NoError(t, err)
	assert.Contains(t, strings.Join(fields, " "), "billing_worker_7__eu_/", "the owner in Redis names its Client")
}

func TestInvalidOptions(t *testing.T) {
	for _, o := range []distsync.Options{
		{Watchdog: watchdog.Config{Lease: -time.Second}},
		{Watchdog: watchdog.Config{Lease: time.Millisecond}},
		{WaiterWindow: -1},
		{DB: -1},
		{ReplicaAck: distsync.ReplicaAck{Replicas: -1}},
		{Prefix: "{app}:"},
		{Watchdog: watchdog.Config{Lease: time.Millisecond}},
		{Watchdog: watchdog.Config{Interval: 16 * time.Second}},
		{Watchdog: watchdog.Config{Lease: time.Second, Interval: time.Second}},
		{Watchdog: watchdog.Config{Interval: -1}},
		{Watchdog: watchdog.Config{Interval: time.Microsecond}},
		{Watchdog: watchdog.Config{BatchSize: -1}},
		{Watchdog: watchdog.Config{SafetyMargin: -1}},
		{Watchdog: watchdog.Config{Lease: time.Second, SafetyMargin: 300 * time.Millisecond}},
		{Prefix: "app{"},
		{Prefix: "app}:"},
	} {
		_, err := distsync.New(o)
		assert.ErrorIs(t, err, distsync.ErrInvalidArgument, "%+v", o)
	}
	_, err := distsync.FromClient(nil, distsync.Options{})
	assert.ErrorIs(t, err, distsync.ErrInvalidArgument, "FromClient(nil)")
}

// A prefix with a brace would put its own hash tag before the name's: every
// name would share one Cluster slot. FromClient refuses it too.
func TestPrefixWithBraceRefused(t *testing.T) {
	rc := redistest.Shared(t).Client(t)
	_, err := distsync.FromClient(rc, distsync.Options{Prefix: "{app}:"})
	assert.ErrorIs(t, err, distsync.ErrInvalidArgument)
	c, err := distsync.FromClient(rc, distsync.Options{Prefix: "app:"})
	require.NoError(t, err)
	c.Close()
}

// The watchdog's settings take effect: a short interval renews a long
// lease many times, in batches no larger than BatchSize, and Stats says so.
func TestWatchdogConfig(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t, func(o *distsync.Options) {
		// 200 ms: a renewal's round trip on a loaded machine stays within
		// it (at 20 ms, one under a CPU hog timed out and counted a failure).
		o.Watchdog = watchdog.Config{Lease: time.Minute, Interval: 200 * time.Millisecond, BatchSize: 2}
	})
	ctx := context.Background()
	for i := range 5 {
		m, err := c.Mutex(fmt.Sprintf("%s-%d", dstest.Name(t), i))
		require.NoError(t, err)
		held, err := m.Lock(ctx)
		require.NoError(t, err)
		t.Cleanup(func() { m.Unlock(held) })
	}
	// With the default interval (20 s) nothing would be renewed in time.
	require.Eventually(t, func() bool { return c.Stats().Renewals >= 15 }, 10*time.Second, time.Millisecond)
	st := c.Stats()
	assert.Equal(t, 5, st.HeldLeases)
	assert.GreaterOrEqual(t, st.RenewalRoundTrips*2, st.Renewals, "batches of at most 2")
	assert.Positive(t, st.Ticks)
	assert.Zero(t, st.Failures)
	assert.Zero(t, st.LostLeases)
}

func TestFlushDelayReachesRueidis(t *testing.T) {
	for _, c := range []struct {
		set, want time.Duration
	}{
		{0, distsync.DefaultFlushDelay},
		{-1, 0},
		{50 * time.Microsecond, 50 * time.Microsecond},
	} {
		ro := distsync.RueidisOption(distsync.Options{FlushDelay: c.set})
		assert.Equal(t, c.want, ro.MaxFlushDelay, "FlushDelay %v", c.set)
		assert.True(t, ro.DisableAutoPipelining, "FlushDelay %v", c.set)
	}
	// A Client with the default and one that writes at once both lock.
	s := redistest.Shared(t)
	for _, d := range []time.Duration{0, -1} {
		o := distsync.Options{Addrs: []string{s.Addr()}, Prefix: "flushdelay:", FlushDelay: d, RESP2: s.RESP2()}
		c, err := distsync.New(o)
		require.NoError(t, err)
		m, err := c.Mutex("x")
		require.NoError(t, err)
		ctx, err := m.Lock(context.Background())
		require.NoError(t, err)
		require.NoError(t, m.Unlock(ctx))
		c.Close()
	}
}
