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
	"github.com/distsync/distsync/internal/dstest"
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
			dstest.WaitWaiters(t, a, ma.Key()+":waiters", 1)
			require.NoError(t, ma.Unlock(held))
			select {
			case err := <-got:
				require.NoError(t, err)
			case <-time.After(time.Minute):
				t.Fatalf("%s: waiter not woken by the release", name)
			}
		}
	})

	t.Run("every locker: exclusion and wake-ups on many slots", func(t *testing.T) {
		for _, k := range dstest.Kinds {
			for i := range 3 { // names on different slots
				name := fmt.Sprintf("%s-%d", k.Name, i)
				var ls []distsync.Locker
				for g := range 4 {
					c := a
					if g%2 == 1 {
						c = b
					}
					l, err := k.New(c, name)
					require.NoError(t, err)
					ls = append(ls, l)
				}
				dstest.Contend(t, ls, 5, time.Minute)
			}
		}
	})

	t.Run("read-write lock readers share", func(t *testing.T) {
		ctx := context.Background()
		rwa, err := a.RWLock("rw-share")
		require.NoError(t, err)
		rwb, err := b.RWLock("rw-share")
		require.NoError(t, err)
		ra, err := rwa.Read().Lock(ctx)
		require.NoError(t, err)
		rb, err := rwb.Read().TryLock(ctx, 0, 0)
		require.NoError(t, err, "readers share")
		got := make(chan error, 1)
		go func() {
			w, err := rwb.Write().TryLock(ctx, time.Minute, 0)
			if err == nil {
				err = rwb.Write().Unlock(w)
			}
			got <- err
		}()
		require.NoError(t, rwa.Read().Unlock(ra))
		require.NoError(t, rwb.Read().Unlock(rb))
		require.NoError(t, <-got, "the writer is woken when the last reader leaves")
	})

	t.Run("semaphores and latch", func(t *testing.T) {
		ctx := context.Background()
		sa, err := a.Semaphore("lot")
		require.NoError(t, err)
		sb, err := b.Semaphore("lot")
		require.NoError(t, err)
		_, err = sa.TrySetPermits(ctx, 1)
		require.NoError(t, err)
		require.NoError(t, sa.Acquire(ctx, 1))
		got := make(chan error, 1)
		go func() { got <- sb.TryAcquire(ctx, 1, time.Minute) }()
		dstest.WaitWaiters(t, a, sa.Key()+":waiters", 1)
		require.NoError(t, sa.Release(ctx, 1))
		require.NoError(t, <-got, "a release wakes the waiter across the cluster")
		require.NoError(t, sb.Release(ctx, 1))
		_, err = sa.Delete(ctx)
		require.NoError(t, err)

		pa, err := a.PermitSemaphore("permits")
		require.NoError(t, err)
		pb, err := b.PermitSemaphore("permits")
		require.NoError(t, err)
		_, err = pa.TrySetPermits(ctx, 1)
		require.NoError(t, err)
		p, err := pa.Acquire(ctx)
		require.NoError(t, err)
		pgot := make(chan error, 1)
		go func() {
			q, err := pb.TryAcquire(ctx, time.Minute, 0)
			if err == nil {
				err = pb.Release(ctx, q)
			}
			pgot <- err
		}()
		require.NoError(t, pa.Release(ctx, p))
		require.NoError(t, <-pgot)
		_, err = pa.Delete(ctx)
		require.NoError(t, err)

		la, err := a.Latch("ready")
		require.NoError(t, err)
		lb, err := b.Latch("ready")
		require.NoError(t, err)
		_, err = la.TrySetCount(ctx, 2)
		require.NoError(t, err)
		lgot := make(chan error, 1)
		go func() { lgot <- lb.Await(ctx) }()
		_, err = la.CountDown(ctx)
		require.NoError(t, err)
		_, err = la.CountDown(ctx)
		require.NoError(t, err)
		require.NoError(t, <-lgot, "awaiters are woken at zero")
	})

	t.Run("a killed waiter is passed over by sharded pub/sub", func(t *testing.T) {
		// A release asks SHARDNUMSUB, on the name's master, whether the
		// waiter's Client still listens (killedWaiterPassedOver).
		for _, k := range dstest.Kinds {
			t.Run(k.Name, func(t *testing.T) {
				killedWaiterPassedOver(t, a, b, cl.Addrs(), k, func(ch string) int64 { return shardListeners(t, a, ch) })
			})
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

// waitInspected waits (at most 20 s) until the primitive called name has n
// waiters (Client.Inspect).
func waitInspected(t *testing.T, c *distsync.Client, name string, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		info, err := c.Inspect(context.Background(), name)
		return err == nil && len(info.Waiters) == n
	}, 20*time.Second, time.Millisecond, "%s: want %d waiters", name, n)
}

// shardListeners returns how many connections listen on the sharded
// channel ch, on the master of its slot (PUBSUB SHARDNUMSUB).
func shardListeners(t *testing.T, c *distsync.Client, ch string) int64 {
	t.Helper()
	rc := c.Rueidis()
	m, err := rc.Do(context.Background(), rc.B().PubsubShardnumsub().Channel(ch).Build()).AsIntMap()
	require.NoError(t, err)
	return m[ch]
}
