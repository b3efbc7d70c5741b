package integration_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/core"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
)

// Through Sentinel, the Client finds the master and locks and wakes as on a
// standalone server.
func TestSentinel(t *testing.T) {
	t.Parallel()
	st := redistest.StartSentinel(t, 1, 1)
	c, err := distsync.New(distsync.Options{Addrs: st.SentinelAddrs(), MasterName: st.MasterName()})
	require.NoError(t, err)
	defer c.Close()
	m, err := c.Mutex("via-sentinel")
	require.NoError(t, err)
	ctx := context.Background()
	held, err := m.TryLock(ctx, 0, 10*time.Minute)
	require.NoError(t, err)
	got := make(chan error, 1)
	go func() {
		w, err := m.TryLock(ctx, 5*time.Minute, 0)
		if err == nil {
			err = m.Unlock(w)
		}
		got <- err
	}()
	dstest.WaitWaiters(t, c, m.Key()+":waiters", 1)
	require.NoError(t, m.Unlock(held))
	select {
	case err := <-got:
		require.NoError(t, err)
	case <-time.After(time.Minute):
		t.Fatal("waiter not woken")
	}
	// The key is on the master, not elsewhere.
	n, err := st.Master().Client(t).Do(ctx, st.Master().Client(t).B().Exists().Key(core.FenceOf(m.Key(), false)).Build()).AsInt64()
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
}
