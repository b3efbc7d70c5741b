package integration_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
)

// startReplica starts a replica of master and waits until it is in sync.
func startReplica(t *testing.T, master *redistest.Server) *redistest.Server {
	t.Helper()
	return startReplicaOf(t, master, master.Port())
}

// startReplicaOf starts a replica of master that connects to it on
// 127.0.0.1:port (master's own port, or a proxy's in front of it) and waits
// until it is in sync and has acknowledged a first write: the first write
// acknowledged after a replica attaches can wait up to a second for it (its
// periodic acknowledgement), which would make a test's first acquisition
// with replica acknowledgement time out.
func startReplicaOf(t *testing.T, master *redistest.Server, port int) *redistest.Server {
	t.Helper()
	replica := redistest.Start(t, redistest.WithConfig("replicaof", "127.0.0.1 "+strconv.Itoa(port)))
	rc := replica.Client(t)
	require.Eventually(t, func() bool {
		info, err := rc.Do(context.Background(), rc.B().Info().Section("replication").Build()).ToString()
		return err == nil && strings.Contains(info, "master_link_status:up")
	}, 20*time.Second, 10*time.Millisecond)
	mc := master.Client(t)
	rs := mc.DoMulti(context.Background(), // one connection: WAIT covers the SET
		mc.B().Set().Key("startReplicaOf").Value("1").Build(),
		mc.B().Wait().Numreplicas(1).Timeout(20000).Build())
	require.NoError(t, rs[0].Error())
	acked, err := rs[1].AsInt64()
	require.NoError(t, err)
	require.Equal(t, int64(1), acked, "the replica acknowledges")
	return replica
}

// With replica acknowledgement, a grant that no replica has is undone and
// refused, so a failover cannot hand the lock to a second owner because the
// first grant never reached the replica.
func TestReplicaAckRefusesUnreplicatedGrant(t *testing.T) {
	t.Parallel()
	c, replica := ackedClient(t)
	m, err := c.Mutex("acked")
	require.NoError(t, err)
	ctx := context.Background()

	held, err := m.Lock(ctx)
	require.NoError(t, err, "granted once the replica acknowledged")
	require.NoError(t, m.Unlock(held))

	replica.Pause()
	_, err = m.TryLock(ctx, 0, 0)
	replica.Resume()
	require.ErrorIs(t, err, distsync.ErrNotReplicated)
	locked, err := m.IsLocked(ctx)
	require.NoError(t, err)
	assert.False(t, locked, "the unacknowledged grant was undone")

	held, err = m.TryLock(ctx, 0, 0)
	require.NoError(t, err, "granted again once the replica answers")
	require.NoError(t, m.Unlock(held))
}

// With replica acknowledgement and a healthy replica, the watchdog's
// acknowledged renewals keep a lock past several leases.
func TestReplicaAckRenewals(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: holds a lock over several leases")
	}
	master := redistest.Start(t)
	redistest.RequireReal(t, master, "a replica: the embedded server has no replication")
	startReplica(t, master)
	const lease = 900 * time.Millisecond
	c := dstest.ClientOn(t, master, func(o *distsync.Options) {
		o.Watchdog.Lease = lease
		o.ReplicaAck = distsync.ReplicaAck{Replicas: 1, Timeout: 200 * time.Millisecond}
	})
	m, err := c.Mutex("acked-renewals")
	require.NoError(t, err)
	held, err := m.Lock(context.Background())
	require.NoError(t, err)
	time.Sleep(4 * lease) // only acknowledged renewals keep the hold alive
	require.NoError(t, held.Err(), "the lease must not be lost")
	require.NoError(t, m.Unlock(held))
}
