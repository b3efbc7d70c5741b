package main

import (
	"context"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/watchdog"
)

// wdResult is what holding n leases at once cost one library.
type wdResult struct {
	lib        string
	n          int
	acquire    time.Duration // taking the n locks (64 goroutines)
	interval   time.Duration // the library's renewal interval
	pass       time.Duration // time spent renewing all n leases once (sum of ticks)
	ticks      int           // watchdog passes that renewed them
	roundTrips int64         // pipelined batches sent for them
	cpu        time.Duration // client CPU over one renewal interval
	cmds       int64         // server commands over one renewal interval
	memPerHold float64       // bytes of heap and stack per held lease
	lost       int64
	errors     int64
	skipped    string
	note       string
}

// holdAll acquires n locks named prefix:i with 64 goroutines and returns
// their releases.
func holdAll(n int, lock func(i int) (func() error, error)) ([]func() error, int64) {
	rel := make([]func() error, n)
	var next, errs atomic.Int64
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				r, err := lock(i)
				if err != nil {
					errs.Add(1)
					continue
				}
				rel[i] = r
			}
		}()
	}
	wg.Wait()
	return rel, errs.Load()
}

func releaseAll(rel []func() error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(rel) {
					return
				}
				if rel[i] != nil {
					rel[i]()
				}
			}
		}()
	}
	wg.Wait()
}

// liveBytes is the heap and stack in use after a collection.
func liveBytes() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc + ms.StackInuse
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// watchdogDistsync holds n mutexes of one Client at once and measures the
// watchdog's first pass over them: its ticks, their duration and round trips,
// and the client's CPU from the end of acquisition to the end of the pass
// (about one renewal interval).
func watchdogDistsync(addr string, admin rueidis.Client, n int, lease time.Duration, prefix string) wdResult {
	res := wdResult{lib: "distsync", n: n, interval: lease / 3}
	c, err := distsync.New(distsync.Options{Addrs: []string{addr}, Watchdog: watchdog.Config{Lease: lease}})
	if err != nil {
		res.skipped = err.Error()
		return res
	}
	defer c.Close()
	ctx := context.Background()
	lockOne := func(i int) (func() error, error) { return dsLocker{c}.lock(ctx, prefix+":"+strconv.Itoa(i)) }
	if r, err := lockOne(-1); err == nil { // warm up: connection, scripts, watchdog goroutine
		r()
	}
	stats := c.Stats // a snapshot each call
	base := liveBytes()
	t0 := time.Now()
	rel, errs := holdAll(n, lockOne)
	res.acquire = time.Since(t0)
	res.errors = errs
	res.memPerHold = float64(liveBytes()-base) / float64(n)
	renewals0, trips0, ticks0, lost0 := stats().Renewals, stats().RenewalRoundTrips, stats().Ticks, stats().LostLeases
	cpu0, cmd0 := cpuTime(), cmdStats(admin)
	// Poll coarsely (20 ms: ticks are at least a tenth of an interval
	// apart) so that polling costs little CPU; read a tick's duration at the
	// poll after it was counted.
	ticks, pending := ticks0, false
	give := time.Now().Add(lease)
	for stats().Renewals-renewals0 < int64(n-int(errs)) && time.Now().Before(give) {
		time.Sleep(20 * time.Millisecond)
		if pending {
			res.pass += stats().LastTick
			pending = false
		}
		if t := stats().Ticks; t != ticks {
			res.ticks += int(t - ticks)
			ticks, pending = t, true
		}
	}
	// The tick that sent the last renewals is counted once it ends.
	for stats().Ticks == ticks && time.Now().Before(give) {
		time.Sleep(5 * time.Millisecond)
	}
	if t := stats().Ticks; t != ticks {
		res.ticks += int(t - ticks)
		pending = true
	}
	if pending {
		time.Sleep(5 * time.Millisecond)
		res.pass += stats().LastTick
	}
	res.cpu, res.cmds = cpuTime()-cpu0, 0
	total, _ := cmdDelta(cmd0, cmdStats(admin))
	res.cmds = total
	res.roundTrips = stats().RenewalRoundTrips - trips0
	res.lost = stats().LostLeases - lost0
	releaseAll(rel)
	return res
}

// watchdogRueidislock holds n rueidislock locks at once (each renewed by its
// own goroutines every ExtendInterval, 2.5 s by default) and measures the
// client's CPU and the server commands over two intervals, halved.
func watchdogRueidislock(addr string, admin rueidis.Client, n int, prefix string) wdResult {
	const interval = 2500 * time.Millisecond // KeyValidity 5 s / 2
	res := wdResult{lib: "rueidislock", n: n, interval: interval}
	l, err := rueidislock.NewLocker(rueidislock.LockerOption{ClientOption: peerOption(addr)})
	if err != nil {
		res.skipped = err.Error()
		return res
	}
	defer l.Close()
	ctx := context.Background()
	lockOne := func(i int) (func() error, error) {
		_, cancel, err := l.WithContext(ctx, prefix+":"+strconv.Itoa(i))
		if err != nil {
			return nil, err
		}
		return func() error { cancel(); return nil }, nil
	}
	if r, err := lockOne(-1); err == nil {
		r()
	}
	base := liveBytes()
	t0 := time.Now()
	rel, errs := holdAll(n, lockOne)
	res.acquire = time.Since(t0)
	res.errors = errs
	res.memPerHold = float64(liveBytes()-base) / float64(n)
	cpu0, cmd0 := cpuTime(), cmdStats(admin)
	time.Sleep(2 * interval)
	res.cpu = (cpuTime() - cpu0) / 2
	total, _ := cmdDelta(cmd0, cmdStats(admin))
	res.cmds = total / 2
	releaseAll(rel)
	return res
}
