package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/distsync/distsync"
)

// fpResult is what distsync's mutexes cost the server (scenario f).
type fpResult struct {
	holds, waiters, names int
	perHold               float64       // used_memory per held mutex
	perWaiter             float64       // used_memory per registered waiter
	drain                 time.Duration // from the holders' release to the last waiter's
	drained               int64         // waiters that held and released
	keysLeft              int64         // keys 12 s after every held name was released
	bytesLeft             float64       // used_memory above the empty server's then, per name
	errors                int64
	skipped               string
}

// footprint measures what distsync's mutexes keep on the server (INFO
// used_memory, after FLUSHALL): per held mutex with holds names held at
// once; the keys and bytes those names leave 12 s after their release (10 s
// of finished marks, then only the slots' fencing counters); and per waiter
// with waiters goroutines, in 4 Clients, waiting for names mutexes, held by
// another Client, which it then releases all at once and times until every
// waiter held and released.
func footprint(addr string, admin rueidis.Client, holds, waiters, names int, prefix string) fpResult {
	res := fpResult{holds: holds, waiters: waiters, names: names}
	ctx := context.Background()
	used := func() float64 {
		info, _ := admin.Do(ctx, admin.B().Info().Section("memory").Build()).ToString()
		for _, line := range strings.Split(info, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
				n, _ := strconv.ParseFloat(v, 64)
				return n
			}
		}
		return 0
	}
	dbsize := func() int64 {
		n, _ := admin.Do(ctx, admin.B().Dbsize().Build()).AsInt64()
		return n
	}
	open := func() *distsync.Client {
		c, err := distsync.New(distsync.Options{Addrs: []string{addr}})
		if err != nil && res.skipped == "" {
			res.skipped = err.Error()
		}
		return c
	}
	holder := open()
	if holder == nil {
		return res
	}
	defer holder.Close()
	lockOne := func(c *distsync.Client, name string) (func() error, error) { return dsLocker{c}.lock(ctx, name) }
	if r, err := lockOne(holder, prefix+":warmup"); err == nil { // scripts and connections
		r()
	}
	admin.Do(ctx, admin.B().Flushall().Sync().Build())
	base := used()

	// Held mutexes, then what they leave once released.
	rel, errs := holdAll(holds, func(i int) (func() error, error) { return lockOne(holder, prefix+":h:"+strconv.Itoa(i)) })
	res.errors += errs
	res.perHold = (used() - base) / float64(holds)
	releaseAll(rel)
	time.Sleep(12 * time.Second)
	res.keysLeft = dbsize()
	res.bytesLeft = (used() - base) / float64(holds)
	admin.Do(ctx, admin.B().Flushall().Sync().Build())

	// Waiters, and how fast they drain.
	rel, errs = holdAll(names, func(i int) (func() error, error) { return lockOne(holder, prefix+":w:"+strconv.Itoa(i)) })
	res.errors += errs
	held := used()
	clients := make([]*distsync.Client, 4)
	for i := range clients {
		if clients[i] = open(); clients[i] == nil {
			return res
		}
		defer clients[i].Close()
	}
	var wg sync.WaitGroup
	var done atomic.Int64
	last := make(chan struct{})
	for i := range waiters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := lockOne(clients[i%len(clients)], prefix+":w:"+strconv.Itoa(i%names))
			if err == nil {
				err = r()
			}
			if err != nil {
				atomic.AddInt64(&res.errors, 1)
			}
			if done.Add(1) == int64(waiters) {
				close(last)
			}
		}()
	}
	// Every waiter registered: the waiter entries of every name add up.
	for give := time.Now().Add(5 * time.Minute); time.Now().Before(give); time.Sleep(200 * time.Millisecond) {
		n := 0
		for i := range names {
			m, _ := holder.Mutex(prefix + ":w:" + strconv.Itoa(i))
			k, _ := m.Waiting(ctx)
			n += k
		}
		if n >= waiters {
			break
		}
	}
	res.perWaiter = (used() - held) / float64(waiters)
	now := time.Now()
	releaseAll(rel)
	select {
	case <-last:
	case <-time.After(5 * time.Minute):
	}
	res.drain = time.Since(now)
	res.drained = done.Load()
	wg.Wait()
	return res
}

func (x fpResult) print(w io.Writer) {
	fmt.Fprintln(w, "\nf footprint: distsync mutexes, server memory (INFO used_memory)")
	if x.skipped != "" {
		fmt.Fprintln(w, "  skipped: "+x.skipped)
		return
	}
	fmt.Fprintf(w, "  held: %.0f B per held mutex (%s held at once)\n", x.perHold, num(float64(x.holds)))
	fmt.Fprintf(w, "  released: 12 s after %s names were released, %d keys and %.1f B per name are left\n", num(float64(x.holds)), x.keysLeft, x.bytesLeft)
	fmt.Fprintf(w, "  waiting: %.0f B per waiter (%s waiters on %s names, 4 Clients)\n", x.perWaiter, num(float64(x.waiters)), num(float64(x.names)))
	rate := 0.0
	if x.drain > 0 {
		rate = float64(x.drained) / x.drain.Seconds()
	}
	fmt.Fprintf(w, "  drain: %d waiters held and released in %s, %s acquisitions/s; %d errors\n", x.drained, dur(x.drain), num(rate), x.errors)
}
