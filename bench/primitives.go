package main

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/rwlock"
)

// Scenarios of distsync's primitives that the peers do not have (5-7).

// fairQueue takes a fair lock, queues n waiters one at a time (each is
// queued, as FairLock.Waiting shows, before the next starts, so the queue
// order is known), releases, and times the n handoffs down the queue: the
// latency of handoff k is from the moment the previous holder starts
// releasing to the moment waiter k holds. A waiter granted out of its queue
// position is an order violation.
func fairQueue(n int) func(run) result {
	return func(r run) result {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		fl, err := r.ds.FairLock(r.prefix)
		if err != nil {
			return result{errors: 1}
		}
		hctx, err := fl.Lock(ctx)
		if err != nil {
			return result{errors: 1}
		}
		var (
			gd       guard
			seq      atomic.Int64
			errs     atomic.Int64
			wg       sync.WaitGroup
			held     = make([]time.Time, n) // when waiter i held the lock
			released = make([]time.Time, n) // when waiter i started releasing
			order    = make([]int64, n)     // waiter i's acquisition sequence number
		)
		queued, polls := 0, int64(0)
		for i := range n {
			order[i] = -1
			wg.Add(1)
			go func() {
				defer wg.Done()
				lctx, err := fl.Lock(ctx)
				if err != nil {
					errs.Add(1)
					return
				}
				held[i] = time.Now()
				order[i] = seq.Add(1) - 1
				gd.critical()
				released[i] = time.Now()
				if err := fl.Unlock(lctx); err != nil {
					errs.Add(1)
				}
			}()
			for queued <= i && errs.Load() == 0 {
				polls++
				if queued, err = fl.Waiting(ctx); err != nil {
					errs.Add(1)
				}
			}
		}
		t0 := time.Now()
		if err := fl.Unlock(hctx); err != nil {
			errs.Add(1)
		}
		wg.Wait()

		res := result{errors: errs.Load(), violations: gd.violations(), harness: polls}
		bySeq := make([]int, 0, n) // waiters in the order they held
		for i := range n {
			if order[i] >= 0 {
				bySeq = append(bySeq, i)
			}
		}
		slices.SortFunc(bySeq, func(a, b int) int { return int(order[a] - order[b]) })
		prev := t0
		for k, i := range bySeq {
			if order[i] != int64(i) {
				res.violations++ // granted out of queue order
			}
			if held[i].Before(prev) {
				res.violations++ // held before the previous holder released
			}
			res.lat = append(res.lat, held[i].Sub(prev))
			prev = released[i]
			if k == len(bySeq)-1 {
				res.window = held[i].Sub(t0)
			}
		}
		res.ops = int64(len(bySeq))
		return res
	}
}

// semaphoreLoop sets a semaphore's permits and has g goroutines acquire and
// release one permit until the window ends. Two checks of the bound: the
// goroutines count themselves inside between acquire and release (more than
// permits at once is a violation), and a poller reads the available permits
// on the server every millisecond (below 0 is a violation; permits minus the lowest
// reading is the peak of holders the server saw). A permit missing at the
// end is a violation too. The latency is that of acquire+release. With
// permit, the permit-expiring semaphore (one permit with the watchdog's
// lease), else the counting one.
func semaphoreLoop(permits int64, g int, permit bool) func(run) result {
	return func(r run) result {
		ctx := context.Background()
		var s interface {
			TrySetPermits(context.Context, int64) (bool, error)
			Available(context.Context) (int64, error)
		}
		var take func(ctx context.Context) (release func() error, err error)
		if permit {
			ps, err := r.ds.PermitSemaphore(r.prefix)
			if err != nil {
				return result{errors: 1}
			}
			s = ps
			take = func(ctx context.Context) (func() error, error) {
				p, err := ps.Acquire(ctx)
				return func() error { return ps.Release(ctx, p) }, err
			}
		} else {
			cs, err := r.ds.Semaphore(r.prefix)
			if err != nil {
				return result{errors: 1}
			}
			s = cs
			take = func(ctx context.Context) (func() error, error) {
				return func() error { return cs.Release(ctx, 1) }, cs.Acquire(ctx, 1)
			}
		}
		if ok, err := s.TrySetPermits(ctx, permits); !ok || err != nil {
			return result{errors: 1}
		}
		var inside, over atomic.Int64
		stop, polled := make(chan struct{}), make(chan struct{})
		lowest, polls, pollErrs := permits, int64(0), int64(0)
		go func() {
			defer close(polled)
			for {
				select {
				case <-stop:
					return
				case <-time.After(time.Millisecond): // a sample, not a load
				}
				polls++
				if avail, err := s.Available(ctx); err != nil {
					pollErrs++
				} else {
					lowest = min(lowest, avail)
				}
			}
		}()
		res := timed(r, g, true, func(ctx context.Context, _ int) (time.Time, error) {
			release, err := take(ctx)
			if err != nil {
				return time.Time{}, err
			}
			held := time.Now()
			if inside.Add(1) > permits {
				over.Add(1)
			}
			inside.Add(-1)
			return held, release()
		})
		close(stop)
		<-polled
		res.violations, res.peak, res.harness, res.errors = over.Load(), permits-lowest, polls, res.errors+pollErrs
		if lowest < 0 {
			res.violations++
		}
		if avail, err := s.Available(ctx); err != nil {
			res.errors++
		} else if avail != permits {
			res.violations++ // permits lost or made up
		}
		return res
	}
}

// rwLoop has g goroutines take a read-write lock until the window ends, the
// write lock with probability writes and the read lock otherwise, and checks
// the exclusion: no reader inside while a writer is, at most one writer
// inside (whose non-atomic counter must lose no update). Each side counts
// itself in before it looks at the other, so any overlap is seen by at least
// one of the two. The latency is that of lock+unlock; wlat keeps the
// writes', rlat the reads'.
func rwLoop(g int, writes float64, preferWriters bool) func(run) result {
	return func(r run) result {
		var opts []rwlock.Option
		if preferWriters {
			opts = append(opts, rwlock.PreferWriters())
		}
		rw, err := r.ds.RWLock(r.prefix, opts...)
		if err != nil {
			return result{errors: 1}
		}
		var (
			readers, writers, bad atomic.Int64
			gd                    guard
			wlats                 = make([][]time.Duration, g)
			rlats                 = make([][]time.Duration, g)
		)
		res := timed(r, g, true, func(ctx context.Context, i int) (time.Time, error) {
			t0 := time.Now()
			if rand.Float64() < writes {
				lctx, err := rw.Write().Lock(ctx)
				if err != nil {
					return time.Time{}, err
				}
				held := time.Now()
				if writers.Add(1) != 1 || readers.Load() != 0 {
					bad.Add(1)
				}
				gd.critical()
				writers.Add(-1)
				err = rw.Write().Unlock(lctx)
				wlats[i] = append(wlats[i], time.Since(t0))
				return held, err
			}
			lctx, err := rw.Read().Lock(ctx)
			if err != nil {
				return time.Time{}, err
			}
			held := time.Now()
			readers.Add(1)
			if writers.Load() != 0 {
				bad.Add(1)
			}
			readers.Add(-1)
			err = rw.Read().Unlock(lctx)
			rlats[i] = append(rlats[i], time.Since(t0))
			return held, err
		})
		res.violations = bad.Load() + gd.violations()
		for i := range wlats {
			res.wlat = append(res.wlat, wlats[i]...)
			res.rlat = append(res.rlat, rlats[i]...)
		}
		return res
	}
}

// The common case of each primitive (1f, 1r, 1w, 1p, 1s): g goroutines, each
// on a name of its own, acquire and release until the window ends, as 1b
// does with the mutex; the row's server cmd/op is the primitive's cost.
// 9u is 1b for the Redlocks over 3 masters, 9s is 1a for them: one
// acquisition at a time and nobody waiting, the pace 9's hand-overs, one
// at a time too, are measured against.
func init() {
	scenarios = append(scenarios,
		scenario{id: "1f", title: "fair lock uncontended, G=64", unit: "pairs/s", run: uncontendedOf(64, fairPair), distsyncOnly: true},
		scenario{id: "1r", title: "read lock uncontended, G=64", unit: "pairs/s", run: uncontendedOf(64, readPair), distsyncOnly: true},
		scenario{id: "1w", title: "write lock uncontended, G=64", unit: "pairs/s", run: uncontendedOf(64, writePair), distsyncOnly: true},
		scenario{id: "1p", title: "permit semaphore uncontended, G=64", unit: "pairs/s", run: uncontendedOf(64, permitPair), distsyncOnly: true},
		scenario{id: "1s", title: "counting semaphore uncontended, G=64", unit: "pairs/s", run: uncontendedOf(64, countPair), distsyncOnly: true},
		scenario{id: "9u", title: "Redlock over 3 masters, uncontended, G=64", unit: "pairs/s", run: uncontended(64), redlock: true},
		scenario{id: "9s", title: "Redlock over 3 masters, uncontended, G=1", unit: "pairs/s", run: uncontended(1), redlock: true},
	)
}

// pairOf returns the acquire-and-release of a primitive's name on c.
type pairOf func(ctx context.Context, c *distsync.Client, name string) (func(ctx context.Context) (release func() error, err error), error)

func uncontendedOf(g int, of pairOf) func(run) result {
	return func(r run) result {
		ctx := context.Background()
		pairs := make([]func(context.Context) (func() error, error), g)
		for i := range pairs {
			p, err := of(ctx, r.ds, r.prefix+":"+strconv.Itoa(i))
			if err != nil {
				return result{errors: 1}
			}
			pairs[i] = p
		}
		return timed(r, g, true, func(ctx context.Context, i int) (time.Time, error) {
			release, err := pairs[i](ctx)
			if err != nil {
				return time.Time{}, err
			}
			return time.Now(), release()
		})
	}
}

// lockPair is the pair of a distsync.Locker.
func lockPair(l distsync.Locker) func(context.Context) (func() error, error) {
	return func(ctx context.Context) (func() error, error) {
		h, err := l.TryLock(ctx, distsync.Forever, 0)
		if err != nil {
			return nil, err
		}
		return func() error { return l.Unlock(h) }, nil
	}
}

func fairPair(_ context.Context, c *distsync.Client, name string) (func(context.Context) (func() error, error), error) {
	f, err := c.FairLock(name)
	if err != nil {
		return nil, err
	}
	return lockPair(f), nil
}

func readPair(_ context.Context, c *distsync.Client, name string) (func(context.Context) (func() error, error), error) {
	rw, err := c.RWLock(name)
	if err != nil {
		return nil, err
	}
	return lockPair(rw.Read()), nil
}

func writePair(_ context.Context, c *distsync.Client, name string) (func(context.Context) (func() error, error), error) {
	rw, err := c.RWLock(name)
	if err != nil {
		return nil, err
	}
	return lockPair(rw.Write()), nil
}

func permitPair(ctx context.Context, c *distsync.Client, name string) (func(context.Context) (func() error, error), error) {
	s, err := c.PermitSemaphore(name)
	if err != nil {
		return nil, err
	}
	if _, err := s.TrySetPermits(ctx, 10); err != nil {
		return nil, err
	}
	return func(ctx context.Context) (func() error, error) {
		p, err := s.Acquire(ctx)
		if err != nil {
			return nil, err
		}
		return func() error { return s.Release(ctx, p) }, nil
	}, nil
}

func countPair(ctx context.Context, c *distsync.Client, name string) (func(context.Context) (func() error, error), error) {
	s, err := c.Semaphore(name)
	if err != nil {
		return nil, err
	}
	if _, err := s.TrySetPermits(ctx, 10); err != nil {
		return nil, err
	}
	return func(ctx context.Context) (func() error, error) {
		if err := s.Acquire(ctx, 1); err != nil {
			return nil, err
		}
		return func() error { return s.Release(ctx, 1) }, nil
	}, nil
}
