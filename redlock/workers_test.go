package redlock

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Each task spawn is given runs at once, on a worker of its own: tasks that
// wait for each other (as the members' calls of one round wait for the
// same masters) all run together, also when idle workers are handed them,
// and a worker idle for workerIdle ends.
func TestSpawnRunsEachTaskAtOnce(t *testing.T) {
	for range 2 { // the second time, mostly on the workers the first left idle
		const n = 5
		var started sync.WaitGroup
		started.Add(n)
		release := make(chan struct{})
		var done sync.WaitGroup
		done.Add(n)
		for range n {
			spawn(func() {
				defer done.Done()
				started.Done()
				<-release
			})
		}
		all := make(chan struct{})
		go func() { started.Wait(); close(all) }()
		select {
		case <-all:
		case <-time.After(30 * time.Second):
			t.Fatal("a task waits behind another")
		}
		close(release)
		done.Wait()
	}
	require.Eventually(t, func() bool {
		workers.mu.Lock()
		defer workers.mu.Unlock()
		return len(workers.idle) == 0
	}, 30*time.Second, workerIdle/2, "idle workers end")
}
