// Command rwcache is a read-heavy cache guarded by a distributed read-write
// lock. Many readers serve a value kept in Redis under the read lock; an
// occasional writer refreshes it under the write lock from a slow source,
// writing it in two steps with the slow fetch in between. Without the lock a
// reader could see the new version with the old payload: a half-written
// value. rwcache prints the hits, the refreshes and the longest time a reader
// waited for the lock, and exits with status 1 if any reader saw a
// half-written value.
//
//	go run ./examples/rwcache                        # in-process server
//	go run ./examples/rwcache -redis 127.0.0.1:6379  # a real one
//
// By default it starts an in-process Redis (miniredis), so it needs nothing
// but Go. The lock uses writer preference: with readers overlapping all the
// time, a writer would otherwise wait for a gap that may never come.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/rwlock"
)

// config is what a run does.
type config struct {
	name     string        // the lock's name; the value is kept at name+":value"
	readers  int           // reader goroutines
	duration time.Duration // how long to serve
	refresh  time.Duration // time between refreshes
	slow     time.Duration // how long the slow source takes
}

// result is what a run saw.
type result struct {
	hits, refreshes, torn int64
	longestWait           time.Duration
}

func main() {
	addr := flag.String("redis", "", "Redis address host:port (default: an in-process server)")
	cfg := config{name: "rwcache"}
	flag.IntVar(&cfg.readers, "readers", 16, "reader goroutines")
	flag.DurationVar(&cfg.duration, "duration", 3*time.Second, "how long to run")
	flag.DurationVar(&cfg.refresh, "refresh", 250*time.Millisecond, "time between refreshes")
	flag.DurationVar(&cfg.slow, "slow", 20*time.Millisecond, "how long the slow source takes")
	flag.Parse()

	opts := distsync.Options{Addrs: []string{*addr}}
	if *addr == "" {
		srv, err := inProcessRedis()
		if err != nil {
			fmt.Fprintln(os.Stderr, "rwcache:", err)
			os.Exit(2)
		}
		defer srv.Close()
		opts = distsync.Options{Addrs: []string{srv.Addr()}, RESP2: true}
		fmt.Println("rwcache: using an in-process Redis (miniredis); -redis host:port for a real one")
	}
	res, err := run(context.Background(), opts, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rwcache:", err)
		os.Exit(2)
	}
	fmt.Printf("hits %d, refreshes %d, longest reader wait %v, half-written values seen %d\n",
		res.hits, res.refreshes, res.longestWait.Round(time.Microsecond), res.torn)
	if res.torn > 0 {
		os.Exit(1)
	}
}

// run serves the cache for cfg.duration: readers on one Client, the writer on
// another, as they would be in different processes.
func run(ctx context.Context, opts distsync.Options, cfg config) (result, error) {
	var res result
	readClient, err := distsync.New(opts)
	if err != nil {
		return res, err
	}
	defer readClient.Close()
	writeClient, err := distsync.New(opts)
	if err != nil {
		return res, err
	}
	defer writeClient.Close()
	readLock, err := readClient.RWLock(cfg.name, rwlock.PreferWriters())
	if err != nil {
		return res, err
	}
	writeLock, err := writeClient.RWLock(cfg.name, rwlock.PreferWriters())
	if err != nil {
		return res, err
	}
	key := cfg.name + ":value"
	rc := writeClient.Rueidis()
	defer rc.Do(context.WithoutCancel(ctx), rc.B().Del().Key(key).Build())

	// refresh writes version v: the version first, then, after the slow
	// source answered, the payload that belongs to it.
	refresh := func(ctx context.Context, v int64) error {
		held, err := writeLock.Write().Lock(ctx)
		if err != nil {
			return err
		}
		defer writeLock.Write().Unlock(held)
		if err := rc.Do(held, rc.B().Hset().Key(key).FieldValue().FieldValue("version", strconv.FormatInt(v, 10)).Build()).Error(); err != nil {
			return err
		}
		time.Sleep(cfg.slow) // the slow source
		return rc.Do(held, rc.B().Hset().Key(key).FieldValue().FieldValue("payload", payload(v)).Build()).Error()
	}
	if err := refresh(ctx, 0); err != nil {
		return res, err
	}

	ctx, cancel := context.WithTimeout(ctx, cfg.duration)
	defer cancel()
	var hits, torn atomic.Int64
	var longest atomic.Int64
	errs := make(chan error, cfg.readers+1)
	var wg sync.WaitGroup
	rrc := readClient.Rueidis()
	for range cfg.readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				start := time.Now()
				held, err := readLock.Read().Lock(ctx)
				if err != nil {
					if ctx.Err() == nil {
						errs <- fmt.Errorf("read lock: %w", err)
					}
					return
				}
				wait := int64(time.Since(start))
				for m := longest.Load(); wait > m && !longest.CompareAndSwap(m, wait); m = longest.Load() {
				}
				vals, err := rrc.Do(held, rrc.B().Hmget().Key(key).Field("version", "payload").Build()).AsStrSlice()
				if err == nil {
					v, _ := strconv.ParseInt(vals[0], 10, 64)
					if vals[1] != payload(v) {
						torn.Add(1)
					}
					hits.Add(1)
				}
				if err != nil {
					err = fmt.Errorf("read: %w", err)
				}
				if uerr := readLock.Read().Unlock(held); err == nil && uerr != nil {
					err = fmt.Errorf("read unlock: %w", uerr)
				}
				if err != nil {
					// The run's deadline can end a read on the connection a
					// moment before ctx itself reports it.
					if ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded) {
						errs <- err
					}
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(cfg.refresh)
		defer tick.Stop()
		for v := int64(1); ; v++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			// A refresh once begun is finished, even if the run ends meanwhile.
			if err := refresh(context.WithoutCancel(ctx), v); err != nil {
				errs <- fmt.Errorf("refresh: %w", err)
				return
			}
			res.refreshes++
		}
	}()
	wg.Wait()
	close(errs)
	res.hits, res.torn, res.longestWait = hits.Load(), torn.Load(), time.Duration(longest.Load())
	return res, <-errs
}

func payload(v int64) string { return "payload of version " + strconv.FormatInt(v, 10) }

// inProcessRedis starts miniredis, an in-process Redis (RESP2 only) whose TTLs
// follow the wall clock, so that the example runs on a machine with nothing
// but Go. Pass -redis host:port to use a real Redis instead.
func inProcessRedis() (*miniredis.Miniredis, error) {
	m := miniredis.NewMiniRedis()
	m.ClockTTL(true)
	if err := m.StartAddr("127.0.0.1:0"); err != nil {
		return nil, err
	}
	return m, nil
}
