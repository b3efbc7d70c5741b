package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/mutex"
)

const benchUsage = `Usage: distsync bench [--duration D] [--workers N] [--scenarios LIST] [connection flags]

Measures the mutex on a server, one scenario after the other, with a progress
indicator on stderr and a table of throughput and latency percentiles on stdout:

  uncontended  one worker locks and unlocks a name nobody else uses;
               latency: one Lock+Unlock pair (two round trips)
  contended    --workers workers on two Clients lock and unlock one name;
               latency: from calling Lock to holding the lock
  handoff      two workers on two Clients pass one lock back and forth, the
               next holder already waiting; latency: from the release to the
               waiter holding the lock (the pub/sub wake-up)

Use a server nobody else relies on: the contended scenario keeps it busy.
`

// benchScenario is one measurement; run records each operation until ctx
// ends (its duration, or a signal), and makes every call under ctx, so a
// signal ends it even while the server does not answer.
type benchScenario struct {
	name string
	run  func(ctx context.Context, b *benchEnv, rec *recorder) error
}

var benchScenarios = []benchScenario{
	{"uncontended", benchUncontended},
	{"contended", benchContended},
	{"handoff", benchHandoff},
}

// maxBenchWorkers bounds --workers: each is a goroutine locking in a loop.
const maxBenchWorkers = 10000

type benchEnv struct {
	a, b    *distsync.Client
	name    string // a name of this run's own
	workers int
}

func (c *cli) bench(args []string) error {
	f := newFlags("bench", benchUsage)
	var cf connFlags
	cf.register(f)
	dflag := f.durationVar("duration", 3*time.Second, "the `time` each scenario runs, e.g. 3 or 500ms")
	workers := f.Int("workers", 8, "workers of the contended scenario, 2 to "+strconv.Itoa(maxBenchWorkers))
	var names []string
	for _, s := range benchScenarios {
		names = append(names, s.name)
	}
	list := f.String("scenarios", strings.Join(names, ","), "comma-separated scenarios to run")
	pos, err := f.parse(c, args, true)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("bench", "unexpected argument %q", pos[0])
	}
	duration := &dflag.d
	switch {
	case *duration <= 0:
		return usageErrorf("bench", "--duration must be more than 0")
	case *workers < 2 || *workers > maxBenchWorkers:
		return usageErrorf("bench", "--workers %d: give 2 to %d", *workers, maxBenchWorkers)
	}
	var run []benchScenario
	for _, n := range splitList(*list) {
		i := slices.IndexFunc(benchScenarios, func(s benchScenario) bool { return s.name == n })
		if i < 0 {
			return usageErrorf("bench", "unknown scenario %q (known: %s)", n, strings.Join(names, ", "))
		}
		run = append(run, benchScenarios[i])
	}
	if len(run) == 0 {
		return usageErrorf("bench", "--scenarios names no scenario (known: %s)", strings.Join(names, ", "))
	}

	o, err := cf.options(c)
	if err != nil {
		return err
	}
	env := &benchEnv{name: "bench-" + randomHex(4), workers: *workers}
	if env.a, err = connect(o); err != nil {
		return err
	}
	defer env.a.Close()
	if env.b, err = connect(o); err != nil {
		return err
	}
	defer env.b.Close()

	ctx, stop := interruptible()
	defer stop()
	fmt.Fprintf(c.stdout, "distsync bench on %s, %v a scenario\n\n", describeAddrs(o), *duration)
	fmt.Fprintf(c.stdout, "%-12s %7s %9s %9s %9s %9s %9s %9s %9s\n", "scenario", "workers", "ops", "ops/s", "p50", "p90", "p99", "p99.9", "max")
	for _, s := range run {
		rec := &recorder{}
		workers := 1
		switch s.name {
		case "contended":
			workers = env.workers
		case "handoff":
			workers = 2
		}
		sctx, cancel := context.WithTimeout(ctx, *duration)
		prog := startProgress(c.stderr, s.name, *duration, rec)
		start := time.Now()
		ran := make(chan error, 1)
		go func() { ran <- s.run(sctx, env, rec) }()
		var err error
		select {
		case err = <-ran:
		case <-ctx.Done():
			// Do not wait for the scenario: a release retries for seconds
			// while the server does not answer. Closing the Clients ends it.
		}
		elapsed := time.Since(start)
		cancel()
		prog.stop()
		if err := interrupted(ctx); err != nil {
			// Keep what was measured: the finished scenarios' rows are out,
			// and this one's covers the time it ran.
			fmt.Fprintln(c.stdout, rec.row(s.name+"*", workers, elapsed))
			fmt.Fprintf(c.stdout, "* interrupted after %.1fs of %v\n", elapsed.Seconds(), *duration)
			return err
		}
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		fmt.Fprintln(c.stdout, rec.row(s.name, workers, elapsed))
	}
	return nil
}

// benchUncontended: one worker, Lock+Unlock pairs on a name of its own.
func benchUncontended(ctx context.Context, b *benchEnv, rec *recorder) error {
	m, err := b.a.Mutex(b.name + "-uncontended")
	if err != nil {
		return err
	}
	for ctx.Err() == nil {
		start := time.Now()
		held, err := m.Lock(ctx)
		if err != nil {
			return unlessDone(ctx, err)
		}
		if err := m.Unlock(held); err != nil {
			return unlessDone(ctx, err)
		}
		rec.add(time.Since(start))
	}
	return nil
}

// unlessDone returns err unless ctx has ended: the end of a scenario cuts
// its calls short. A call's own context may end at ctx's deadline a moment
// before ctx reports it (two timers for one instant), so a deadline that
// has passed counts as ended too.
func unlessDone(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) && errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	return err
}

// benchContended: workers on two Clients lock and unlock one name; each
// operation's latency is the wait for the lock.
func benchContended(ctx context.Context, b *benchEnv, rec *recorder) error {
	name := b.name + "-contended"
	var wg sync.WaitGroup
	errs := make(chan error, b.workers)
	for i := range b.workers {
		c := b.a
		if i%2 == 1 {
			c = b.b
		}
		m, err := c.Mutex(name)
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				start := time.Now()
				held, err := m.Lock(ctx)
				if err != nil {
					if err := unlessDone(ctx, err); err != nil {
						errs <- err
					}
					return
				}
				rec.add(time.Since(start))
				if err := m.Unlock(held); err != nil {
					if err := unlessDone(ctx, err); err != nil {
						errs <- err
					}
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// benchHandoff: the holder waits until the other worker is registered as
// waiting, releases, and the latency is until that waiter holds the lock.
// Then they swap roles.
func benchHandoff(ctx context.Context, b *benchEnv, rec *recorder) error {
	name := b.name + "-handoff"
	ms := [2]*mutex.Mutex{}
	for i, c := range []*distsync.Client{b.a, b.b} {
		m, err := c.Mutex(name)
		if err != nil {
			return err
		}
		ms[i] = m
	}
	// The holds are ctx's: when it ends, distsync releases them.
	held, err := ms[0].Lock(ctx)
	if err != nil {
		return unlessDone(ctx, err)
	}
	holder := 0
	type grant struct {
		ctx context.Context
		at  time.Time
		err error
	}
	for ctx.Err() == nil {
		next := 1 - holder
		got := make(chan grant, 1)
		go func() {
			h, err := ms[next].Lock(ctx)
			got <- grant{h, time.Now(), err}
		}()
		// Wait until the waiter is registered (it subscribed and was refused).
		waiting := false
		for !waiting && ctx.Err() == nil {
			n, err := ms[0].Waiting(ctx)
			if err != nil {
				ms[holder].Unlock(held)
				<-got
				return unlessDone(ctx, err)
			}
			if waiting = n > 0; !waiting {
				time.Sleep(100 * time.Microsecond)
			}
		}
		released := time.Now()
		if err := ms[holder].Unlock(held); err != nil {
			<-got
			return unlessDone(ctx, err)
		}
		g := <-got
		if g.err != nil {
			return unlessDone(ctx, g.err)
		}
		if waiting {
			rec.add(g.at.Sub(released))
		}
		held, holder = g.ctx, next
	}
	return unlessDone(ctx, ms[holder].Unlock(held))
}

// recorder collects operation latencies.
type recorder struct {
	mu  sync.Mutex
	lat []time.Duration
	ops atomic.Int64
}

func (r *recorder) add(d time.Duration) {
	r.ops.Add(1)
	r.mu.Lock()
	r.lat = append(r.lat, d)
	r.mu.Unlock()
}

// row formats the scenario's line of the table.
func (r *recorder) row(name string, workers int, elapsed time.Duration) string {
	r.mu.Lock()
	lat := slices.Clone(r.lat)
	r.mu.Unlock()
	slices.Sort(lat)
	pct := func(p float64) string {
		if len(lat) == 0 {
			return col("-")
		}
		i := int(p * float64(len(lat)-1))
		return col(fmtLatency(lat[i]))
	}
	return fmt.Sprintf("%-12s %7d %9d %9.0f %s %s %s %s %s", name, workers, len(lat),
		float64(len(lat))/elapsed.Seconds(), pct(0.50), pct(0.90), pct(0.99), pct(0.999), pct(1))
}

// col right-aligns s in a column of 9 characters ("µs" is two bytes).
func col(s string) string {
	return strings.Repeat(" ", max(0, 9-utf8.RuneCountInString(s))) + s
}

func fmtLatency(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < time.Second:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}

// progress shows a scenario's progress on stderr: a line redrawn in place
// on a terminal, a start and an end line otherwise.
type progress struct {
	quit chan struct{}
	done chan struct{}
}

func startProgress(w io.Writer, name string, total time.Duration, rec *recorder) *progress {
	p := &progress{quit: make(chan struct{}), done: make(chan struct{})}
	tty := isTerminal(w)
	start := time.Now()
	draw := func(final bool) {
		el := min(time.Since(start), total)
		const width = 20
		n := int(float64(width) * el.Seconds() / total.Seconds())
		bar := strings.Repeat("#", n) + strings.Repeat(".", width-n)
		if tty {
			fmt.Fprintf(w, "\r  %-12s [%s] %4.1fs/%.1fs %9d ops", name, bar, el.Seconds(), total.Seconds(), rec.ops.Load())
			if final {
				fmt.Fprint(w, "\r\033[K")
			}
		} else if final {
			fmt.Fprintf(w, "bench: %s done, %d ops\n", name, rec.ops.Load())
		}
	}
	if !tty {
		fmt.Fprintf(w, "bench: %s for %v...\n", name, total)
	}
	go func() {
		defer close(p.done)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.quit:
				draw(true)
				return
			case <-t.C:
				draw(false)
			}
		}
	}()
	return p
}

func (p *progress) stop() {
	close(p.quit)
	<-p.done
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
