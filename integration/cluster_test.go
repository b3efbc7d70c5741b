package integration_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/redistest"
)

// clusterClient returns a Client on the cluster, closed at cleanup.
func clusterClient(t *testing.T, cl *redistest.Cluster, edit ...func(*distsync.Options)) *distsync.Client {
	t.Helper()
	return connect(t, distsync.Options{Addrs: cl.Addrs()}, edit...)
}

// TestCluster runs every primitive on a three-master Cluster with one replica
// each. Each primitive's keys share a hash tag, so no script is CROSSSLOT;
// waiters are woken by sharded pub/sub.
func TestCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 1)
	a, b := clusterClient(t, cl), clusterClient(t, cl)

	t.Run("mutex on many slots", func(t *testing.T) {
		ctx := context.Background()
		for i := range 30 {
			m, err := a.Mutex(fmt.Sprintf("slot-%d", i))
			require.NoError(t, err)
			held, err := m.Lock(ctx)
			require.NoError(t, err)
			inner, err := m.Lock(held)
			require.NoError(t, err)
			require.NoError(t, m.Unlock(inner))
			require.NoError(t, m.Unlock(held))
		}
	})

	t.Run("mutex waiter woken by sharded pub/sub", func(t *testing.T) {
		ctx := context.Background()
		for i := range 6 { // names spread over the masters
			name := fmt.Sprintf("wake-%d", i)
			ma, err := a.Mutex(name)
			require.NoError(t, err)
			mb, err := b.Mutex(name)
			require.NoError(t, err)
			held, err := ma.TryLock(ctx, 0, 10*time.Minute)
			require.NoError(t, err)
			got := make(chan error, 1)
			go func() {
				w, err := mb.TryLock(ctx, 5*time.Minute, 0)
				if err == nil {
					err = mb.Unlock(w)
				}
				got <- err
			}()
			waitZcard(t, a, ma.Key()+":waiters", 1)
			require.NoError(t, ma.Unlock(held))
			select {
			case err := <-got:
				require.NoError(t, err)
			case <-time.After(time.Minute):
				t.Fatalf("%s: waiter not woken by the release", name)
			}
		}
	})

	t.Run("mutual exclusion", func(t *testing.T) {
		var counter int
		var wg sync.WaitGroup
		for g := range 8 {
			c := a
			if g%2 == 1 {
				c = b
			}
			m, err := c.Mutex("exclusive")
			require.NoError(t, err)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 20 {
					held, err := m.Lock(context.Background())
					if !assert.NoError(t, err) {
						return
					}
					v := counter
					counter = v + 1
					assert.NoError(t, m.Unlock(held))
				}
			}()
		}
		wg.Wait()
		assert.Equal(t, 160, counter)
	})
}

// waitZcard waits until the sorted set key has n members.
func waitZcard(t *testing.T, c *distsync.Client, key string, n int64) {
	t.Helper()
	rc := c.Rueidis()
	require.Eventually(t, func() bool {
		got, err := rc.Do(context.Background(), rc.B().Zcard().Key(key).Build()).AsInt64()
		return err == nil && got == n
	}, 20*time.Second, time.Millisecond)
}
