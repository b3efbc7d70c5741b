package integration_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
)

// With replica acknowledgement, a mutex lock a release hands to a waiter
// is acknowledged like any other grant: with the only replica paused the
// waiter returns ErrNotReplicated and leaves nothing held, instead of
// holding a grant no replica has.
func TestReplicaAckHandedLock(t *testing.T) {
	t.Parallel()
	master := redistest.Start(t)
	redistest.RequireReal(t, master, "a replica: the embedded server has no replication")
	replica := startReplica(t, master)
	holderC := dstest.ClientOn(t, master, withReplicaAck)
	waiterC := dstest.ClientOn(t, master, withReplicaAck)
	holder, err := holderC.Mutex("handed")
	require.NoError(t, err)
	waiter, err := waiterC.Mutex("handed")
	require.NoError(t, err)
	ctx := context.Background()

	held, err := holder.Lock(ctx)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		got, err := waiter.TryLock(ctx, 10*time.Second, 0)
		if err == nil {
			_ = waiter.Unlock(got)
		}
		done <- err
	}()
	require.Eventually(t, func() bool {
		n, err := holder.Waiting(ctx)
		return err == nil && n == 1
	}, 10*time.Second, time.Millisecond, "the waiter is queued")
	// The condition under test: the waiter has waited past the starvation
	// threshold (1 ms), so the release hands it the lock directly.
	time.Sleep(20 * time.Millisecond)

	replica.Pause()
	require.NoError(t, holder.Unlock(held))
	err = <-done
	replica.Resume()
	require.ErrorIs(t, err, distsync.ErrNotReplicated)
	require.Eventually(t, func() bool {
		locked, err := holder.IsLocked(ctx)
		return err == nil && !locked
	}, 5*time.Second, time.Millisecond, "the unacknowledged grant was given back")

	held, err = holder.TryLock(ctx, 0, 0)
	require.NoError(t, err, "granted again once the replica answers")
	require.NoError(t, holder.Unlock(held))
}
