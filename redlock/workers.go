package redlock

import (
	"slices"
	"sync"
	"time"
)

// workers run the members' calls, which go to every master at once: a
// worker that ran one keeps the stack it grew for the next, where a
// goroutine started per call grows a fresh stack through the client's
// call path every time (runtime.copystack was 11% of the client CPU of an
// uncontended Redlock pair over 3 masters). A worker idle for workerIdle
// ends, so that none outlives the work by much.
var workers struct {
	mu   sync.Mutex
	idle []chan func() // each an idle worker's, buffered 1
}

// workerIdle is how long a worker waits for more work before it ends: at
// a rate of one acquisition in that time or more, the workers are reused;
// it is well inside the ~0.4 s that goleak waits for goroutines to end in
// the tests' TestMain (internal/redistest.Main).
const workerIdle = 50 * time.Millisecond

// spawn runs f on an idle worker, or on a new one when none is idle.
func spawn(f func()) {
	workers.mu.Lock()
	if n := len(workers.idle); n > 0 {
		c := workers.idle[n-1]
		workers.idle = workers.idle[:n-1]
		workers.mu.Unlock()
		c <- f
		return
	}
	workers.mu.Unlock()
	go work(make(chan func(), 1), f)
}

// work runs f, then what spawn hands it on c, until it has been idle for
// workerIdle.
func work(c chan func(), f func()) {
	t := time.NewTimer(workerIdle)
	defer t.Stop()
	for {
		f()
		f = nil
		workers.mu.Lock()
		workers.idle = append(workers.idle, c)
		workers.mu.Unlock()
		t.Reset(workerIdle)
		select {
		case f = <-c:
			continue
		case <-t.C:
		}
		workers.mu.Lock()
		i := slices.Index(workers.idle, c)
		if i >= 0 {
			workers.idle = slices.Delete(workers.idle, i, i+1)
		}
		workers.mu.Unlock()
		if i >= 0 {
			return
		}
		f = <-c // spawn took c before the timer fired: its work is coming
	}
}
