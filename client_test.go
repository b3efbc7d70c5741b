package distsync_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/core"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
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
	assert.Regexp(t, `^[A-Za-z0-9._-]+-`+strconv.Itoa(os.Getpid())+`/[0-9a-f-]{36}$`, a.ID(), "<host>-<pid>/<uuid> (host %q)", host)
	named := dstest.Client(t, func(o *distsync.Options) { o.ClientName = "billing worker:7 {eu}" })
	assert.Regexp(t, `^billing_worker_7__eu_/[0-9a-f-]{36}$`, named.ID())
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
		{Lease: -time.Second},
		{Lease: time.Millisecond},
		{WaiterWindow: -1},
		{FenceTTL: -1},
		{DB: -1},
		{ReplicaAck: distsync.ReplicaAck{Replicas: -1}},
		{Prefix: "{app}:"},
		{Prefix: "app{"},
		{Prefix: "app}:"},
	} {
		_, err := distsync.New(o)
		assert.ErrorIs(t, err, distsync.ErrInvalidArgument, "%+v", o)
	}
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

func TestForeverIsTheInternalForever(t *testing.T) {
	assert.Equal(t, core.Forever, distsync.Forever)
}

func TestMinLeaseIsTheInternalMinLease(t *testing.T) {
	assert.Equal(t, core.MinLease, distsync.MinLease)
}
