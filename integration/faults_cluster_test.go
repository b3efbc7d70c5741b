package integration_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/redistest"
	"github.com/distsync/distsync/mutex"
)

// A master failover (CLUSTER FAILOVER) on a Cluster of three masters with a
// replica each, under load: workers lock and unlock mutexes whose names
// spread over every master, two of every three waiting at any time. No
// waiter is left hanging: every worker finishes its rounds within a generous
// bound after the failover. A manual failover loses no write, so exclusion
// and token order must hold in every name's history. Errors are allowed only
// when transient (connection errors, redirections and CLUSTERDOWN while the
// slots move), and the worker retries them.
func TestFaultClusterFailover(t *testing.T) {
	t.Parallel()
	cl := redistest.StartCluster(t, 3, 1)
	const lease = 2 * time.Second
	log := slog.New(slog.NewTextHandler(logWriter{t}, nil))
	edit := func(o *distsync.Options) { o.Watchdog.Lease, o.WaiterWindow, o.Logger = lease, lease, log }
	clients := []*distsync.Client{clusterClient(t, cl, edit), clusterClient(t, cl, edit)}

	// Names on every master: slot ranges are split evenly in StartCluster.
	const perName = 3
	var names []string
	onMaster := map[int]int{}
	rc := cl.Client(t)
	for i := 0; len(names) < 6 || len(onMaster) < 3; i++ {
		name := fmt.Sprintf("load-%d", i)
		m, err := clients[0].Mutex(name)
		require.NoError(t, err)
		slot, err := rc.Do(context.Background(), rc.B().ClusterKeyslot().Key(m.Key()).Build()).AsInt64()
		require.NoError(t, err)
		master := int(slot * 3 / 16384)
		if onMaster[master] >= 2 {
			continue
		}
		onMaster[master]++
		names = append(names, name)
	}

	var failedOver atomic.Bool
	var rounds, after, transients atomic.Int64
	var mu sync.Mutex
	transientKinds := map[string]int{}
	noteTransient := func(err error) {
		transients.Add(1)
		mu.Lock()
		transientKinds[fmt.Sprint(errors.Unwrap(err))]++
		mu.Unlock()
	}
	// retried runs f until it returns nil or a non-transient error, for at
	// most a minute.
	retried := func(f func() error) error {
		for deadline := time.Now().Add(time.Minute); ; {
			err := f()
			if !transient(err) || time.Now().After(deadline) {
				return err
			}
			noteTransient(err)
			time.Sleep(10 * time.Millisecond) // back-off while the slots move
		}
	}

	histories := make([]*history, len(names))
	done := make(chan struct{})
	var wg sync.WaitGroup
	for i, name := range names {
		histories[i] = newHistory(name)
		for g := range perName {
			m, err := clients[g%2].Mutex(name)
			require.NoError(t, err)
			wg.Add(1)
			go func() {
				defer wg.Done()
				worker(t, histories[i], fmt.Sprintf("w%d", g), m, retried, &failedOver, &rounds, &after)
			}()
		}
	}
	go func() { wg.Wait(); close(done) }()

	workers := int64(len(names) * perName)
	require.Eventually(t, func() bool { return rounds.Load() >= 2*workers }, time.Minute, time.Millisecond,
		"the workers did not get going")
	start := time.Now()
	promoted := cl.Failover(t, cl.Masters()[0])
	failedOver.Store(true)
	t.Logf("failover to %s took %v; %d rounds before it", promoted.Addr(), time.Since(start), rounds.Load())

	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("workers still waiting two minutes after the failover: %d of %d rounds after it", after.Load(), 3*workers)
	}
	t.Logf("%d rounds, %d after the failover, finished %v after it; %d transient errors retried: %v",
		rounds.Load(), after.Load(), time.Since(start), transients.Load(), transientKinds)
	for _, h := range histories {
		requireExclusive(t, h)
	}
}

// worker locks m, works a moment under it and unlocks it, round after round,
// until it has done three rounds after the failover. Transient errors are
// retried; any other error fails the test.
func worker(t *testing.T, h *history, who string, m *mutex.Mutex, retried func(func() error) error,
	failedOver *atomic.Bool, rounds, after *atomic.Int64) {
	for mine := 0; mine < 3; {
		var ctx context.Context
		err := retried(func() (err error) {
			ctx, err = m.TryLock(context.Background(), time.Minute, 0)
			return err
		})
		if !assert.NoError(t, err, "%s: lock", who) {
			return
		}
		tok, err := m.Token(ctx)
		if !assert.NoError(t, err) {
			return
		}
		hd := h.acquired(who, tok)
		for range 3 {
			hd.alive(ctx)
			time.Sleep(time.Millisecond) // the work under the lock
		}
		err = hd.release(ctx, func(ctx context.Context) error {
			return retried(func() error { return m.Unlock(ctx) })
		})
		if !assert.NoError(t, err, "%s: unlock", who) {
			return
		}
		rounds.Add(1)
		if failedOver.Load() {
			after.Add(1)
			mine++
		}
	}
}
