package main

import (
	"context"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/distsync/distsync"
)

// result is what one run of a scenario measured for one library; results of
// the rounds of a scenario are merged.
type result struct {
	ops        int64           // operations completed inside the timed window
	window     time.Duration   // the timed window
	lat        []time.Duration // latency of every operation
	violations int64           // mutual exclusion violations seen
	errors     int64           // operations that failed
	firstErr   string          // the first of those failures
	retries    int64           // acquisitions the library gave up on and the harness restarted
	cmds, pubs int64           // server commands (PUBLISH among them) during the run
	harness    int64           // commands the harness itself sent to observe (5, 6), left out of cmds
	clientCPU  time.Duration   // CPU used by this process during the run
	serverCPU  time.Duration   // CPU used by redis-server during the run (when we started it)
	serverCmd  time.Duration   // command time of redis-server during the run (INFO commandstats, cmdTime)
	msgs       int64           // pub/sub messages distsync's notifier received during the run
	wakes      int64           // local waiters those messages woke
	wlat       []time.Duration // latency of the write operations (7), also in lat
	rlat       []time.Duration // latency of the read operations (7), also in lat
	peak       int64           // most holders seen inside at once (6)
	rel        []time.Duration // the releasing call's own duration (3)
	fair       []float64       // Jain's fairness index of the goroutines' operation counts, per round
	na         bool            // the library has no such primitive
}

func (r *result) merge(o result) {
	r.ops += o.ops
	r.window += o.window
	r.lat = append(r.lat, o.lat...)
	r.violations += o.violations
	r.errors += o.errors
	if r.firstErr == "" {
		r.firstErr = o.firstErr
	}
	r.retries += o.retries
	r.cmds += o.cmds
	r.pubs += o.pubs
	r.clientCPU += o.clientCPU
	r.serverCPU += o.serverCPU
	r.serverCmd += o.serverCmd
	r.msgs += o.msgs
	r.wakes += o.wakes
	r.wlat = append(r.wlat, o.wlat...)
	r.rlat = append(r.rlat, o.rlat...)
	r.peak = max(r.peak, o.peak)
	r.rel = append(r.rel, o.rel...)
	r.fair = append(r.fair, o.fair...)
}

// guard checks mutual exclusion: every holder runs critical, which counts
// overlapping holders and increments a non-atomic counter, whose lost
// updates are violations too.
type guard struct {
	inside   atomic.Int32
	overlaps atomic.Int64
	entered  atomic.Int64
	counter  int64 // deliberately not atomic: only the lock orders its updates
}

func (g *guard) critical() {
	if g.inside.Add(1) != 1 {
		g.overlaps.Add(1)
	}
	v := g.counter
	g.entered.Add(1)
	g.counter = v + 1
	g.inside.Add(-1)
}

func (g *guard) violations() int64 {
	return g.overlaps.Load() + g.entered.Load() - g.counter
}

// run is the environment of one scenario run.
type run struct {
	l      locker
	ds     *distsync.Client // the distsync Client when l is distsync's, for its other primitives
	prefix string           // unique prefix for this run's names
	dur    time.Duration    // timed window of loop scenarios
	reps   int              // repetitions of handoff
	// open opens another instance of the library (another Client), as
	// another process would have.
	open func() (locker, error)
}

// loop runs g goroutines that lock, run the critical section and unlock
// until the window ends. nameOf gives goroutine i's lock name. With pair the
// latency is that of lock+unlock; otherwise it is the wait for the lock.
func loop(r run, g int, nameOf func(i int) string, pair bool) result {
	guards := map[string]*guard{}
	for i := range g {
		if guards[nameOf(i)] == nil {
			guards[nameOf(i)] = &guard{}
		}
	}
	retries0 := r.l.retries()
	res := timed(r, g, pair, func(ctx context.Context, i int) (time.Time, error) {
		name := nameOf(i)
		release, err := r.l.lock(ctx, name)
		if err != nil {
			return time.Time{}, err
		}
		held := time.Now()
		guards[name].critical()
		return held, release()
	})
	res.retries = r.l.retries() - retries0
	for _, gd := range guards {
		res.violations += gd.violations()
	}
	return res
}

// op is one operation of goroutine i of a timed loop: acquire, critical
// section, release. It returns when it held (zero when the acquisition
// failed, which ends the goroutine) and the release's error.
type op func(ctx context.Context, i int) (held time.Time, err error)

// timed runs g goroutines that repeat do until the window ends. With pair
// the latency is that of the whole operation; otherwise it is the wait for
// the hold, and operations that hold after the window still report their
// wait (so the longest waits are not cut off) but count toward no
// throughput.
func timed(r run, g int, pair bool, do op) result {
	ctx, cancel := context.WithTimeout(context.Background(), r.dur+2*time.Minute)
	defer cancel()
	lats := make([][]time.Duration, g)
	var ops, errs atomic.Int64
	var firstErr sync.Once
	var errText string
	fail := func(err error) {
		errs.Add(1)
		if err != nil {
			firstErr.Do(func() { errText = err.Error() })
		}
	}
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(r.dur)
	for i := range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat := make([]time.Duration, 0, 4096)
			defer func() { lats[i] = lat }()
			for time.Now().Before(deadline) {
				t0 := time.Now()
				t1, err := do(ctx, i)
				if t1.IsZero() {
					fail(err)
					return
				}
				if err != nil {
					fail(err)
				}
				t2 := time.Now()
				if pair {
					lat = append(lat, t2.Sub(t0))
				} else {
					lat = append(lat, t1.Sub(t0))
				}
				if !t1.After(deadline) {
					ops.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	res := result{ops: ops.Load(), window: r.dur, errors: errs.Load(), firstErr: errText}
	var sum, sq float64
	for _, l := range lats {
		res.lat = append(res.lat, l...)
		sum += float64(len(l))
		sq += float64(len(l)) * float64(len(l))
	}
	if g > 1 && sq > 0 {
		res.fair = []float64{sum * sum / (float64(g) * sq)}
	}
	return res
}

func uncontended(g int) func(run) result {
	return func(r run) result {
		return loop(r, g, func(i int) string { return r.prefix + ":" + strconv.Itoa(i) }, true)
	}
}

func contended(g int) func(run) result {
	return func(r run) result {
		return loop(r, g, func(int) string { return r.prefix }, false)
	}
}

// contendedClients is contended with one instance of the library (one
// Client, one connection pool) per goroutine, as g processes would have:
// a release's notification then reaches g Clients, and a lock that wakes
// one waiter per process wakes g-1. For distsync the notifier counters of
// the g Clients are summed into the result.
func contendedClients(g int) func(run) result {
	return func(r run) result {
		ls := make([]locker, g)
		for i := range ls {
			l, err := r.open()
			if err != nil {
				for _, o := range ls[:i] {
					o.close()
				}
				return result{errors: 1}
			}
			warmUp(l, r.prefix+":warm:"+strconv.Itoa(i))
			ls[i] = l
		}
		defer func() {
			for _, l := range ls {
				l.close()
			}
		}()
		stats := func() (msgs, wakes int64) {
			for _, l := range ls {
				if d, ok := l.(dsLocker); ok {
					st := d.c.Stats()
					msgs, wakes = msgs+st.NotifierMessages, wakes+st.NotifierWakes
				}
			}
			return
		}
		var gd guard
		var retries0 int64
		for _, l := range ls {
			retries0 += l.retries()
		}
		m0, w0 := stats()
		res := timed(r, g, false, func(ctx context.Context, i int) (time.Time, error) {
			release, err := ls[i].lock(ctx, r.prefix)
			if err != nil {
				return time.Time{}, err
			}
			held := time.Now()
			gd.critical()
			return held, release()
		})
		m1, w1 := stats()
		res.msgs, res.wakes = m1-m0, w1-w0
		for _, l := range ls {
			res.retries += l.retries()
		}
		res.retries -= retries0
		res.violations = gd.violations()
		return res
	}
}

// handoff measures, reps times, the time from the moment a holder starts
// releasing to the moment one blocked waiter holds the lock. The waiter is
// given a random 2-12 ms to block first, so that a polling waiter's phase
// is random with respect to the release.
func handoff(r run) result {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var gd guard
	res := result{}
	retries0 := r.l.retries()
	for range r.reps {
		release, err := r.l.lock(ctx, r.prefix)
		if err != nil {
			res.errors++
			continue
		}
		gd.critical()
		started := make(chan struct{})
		got := make(chan time.Time, 1)
		done := make(chan struct{})
		go func() {
			defer close(done)
			close(started)
			rel, err := r.l.lock(ctx, r.prefix)
			if err != nil {
				res.errors++
				got <- time.Time{}
				return
			}
			t := time.Now()
			gd.critical()
			got <- t
			rel()
		}()
		<-started
		time.Sleep(2*time.Millisecond + rand.N(10*time.Millisecond))
		t0 := time.Now()
		if err := release(); err != nil {
			res.errors++
		}
		res.rel = append(res.rel, time.Since(t0))
		t := <-got
		<-done
		switch {
		case t.IsZero():
		case t.Before(t0):
			res.violations++ // the waiter held it before the holder released
		default:
			res.lat = append(res.lat, t.Sub(t0))
			res.ops++
		}
	}
	res.violations += gd.violations()
	res.retries = r.l.retries() - retries0
	return res
}
