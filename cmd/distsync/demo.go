package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/redis/rueidis"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/miniserver"
)

const demoUsage = `Usage: distsync demo [--redis host:port] [--lease D]

A guided tour of the primitives: two workers contending for a mutex (with the
wake-up latency), reentrancy, the watchdog keeping a lock past its lease, a
lost lease cancelling its holder, a fair lock's queue, the parking-lot
semaphore with a crashed car, a cache guarded by a read-write lock, a
countdown latch, and fencing tokens refusing a paused holder's write.

Without --redis it starts an in-process server (miniredis, RESP2) whose
clock follows real time, so it needs nothing but Go. With --redis it runs the
same tour on that server under a key prefix of its own; every step releases
what it took, and at the end it deletes the fencing counters of its prefix. $` + envRedis + ` is
ignored here: the demo never writes to a server you did not name.
`

// demoStep is one stop of the tour. Steps run in order (demoSteps, in
// primitives.go), each on names of its own, releasing all it took; each
// primitive's steps live in demo_<primitive>.go.
type demoStep struct {
	title string
	run   func(ctx context.Context, d *demoEnv) error
}

func (c *cli) demo(args []string) error {
	f := newFlags("demo", demoUsage)
	var cf connFlags
	cf.register(f)
	lflag := f.durationVar("lease", 1500*time.Millisecond, "the watchdog lease `time` of the tour's clients, e.g. 1.5 or 900ms")
	lease := &lflag.d
	pos, err := f.parse(c, args, true)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("demo", "unexpected argument %q", pos[0])
	}
	if *lease < 30*time.Millisecond {
		return usageErrorf("demo", "--lease %v is too short for the tour (at least 30ms)", *lease)
	}

	server := ""
	if len(cf.addrs) == 0 {
		s, err := miniserver.Start()
		if err != nil {
			return withCode(exitUnavailable, err)
		}
		defer s.Close()
		cf.addrs, cf.resp2 = listFlag{s.Addr()}, true
		server = "an in-process Redis (miniredis " + s.Addr() + ", RESP2)"
	} else {
		server = "Redis at " + strings.Join(cf.addrs, ",")
	}
	opts, err := cf.options(c)
	if err != nil {
		return err
	}
	own := cf.prefix == ""
	if own {
		opts.Prefix = "distsync:demo:" + randomHex(4) + ":"
	}
	opts.Watchdog.Lease = *lease
	if !cf.verbose {
		// The tour tells of lost leases itself.
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}

	ctx, stop := interruptible()
	defer stop()
	d := &demoEnv{t: &tour{w: c.stdout}, opts: opts, lease: *lease, own: own}
	defer d.close()
	if d.a, err = d.client(); err != nil {
		return err
	}
	if d.b, err = d.client(); err != nil {
		return err
	}

	start := time.Now()
	fmt.Fprintf(c.stdout, "distsync demo on %s\n", server)
	fmt.Fprintf(c.stdout, "Workers A and B are two Clients, as two processes would be; the watchdog lease is %v.\n", *lease)
	for i, s := range demoSteps {
		d.t.step(i+1, s.title)
		if err := s.run(ctx, d); err != nil {
			if err := interrupted(ctx); err != nil {
				return err
			}
			return fmt.Errorf("step %d (%s): %w", i+1, s.title, err)
		}
	}
	fmt.Fprintf(c.stdout, "\nTour done in %.1fs. Next: distsync run --lock NAME -- COMMAND, distsync inspect NAME.\n", time.Since(start).Seconds())
	return nil
}

// demoEnv is what the steps share: the tour's printer, two Clients (workers
// A and B) and the options to make more.
type demoEnv struct {
	t       *tour
	opts    distsync.Options
	lease   time.Duration
	a, b    *distsync.Client
	clients []*distsync.Client
	own     bool // the prefix is the tour's own: its fencing counters go at the end
}

// client returns a new Client, closed at the end of the tour.
func (d *demoEnv) client() (*distsync.Client, error) {
	c, err := connect(d.opts)
	if err != nil {
		return nil, err
	}
	d.clients = append(d.clients, c)
	return c, nil
}

func (d *demoEnv) close() {
	if d.own && len(d.clients) > 0 {
		dropCounters(d.clients[0].Rueidis(), d.opts.Prefix)
	}
	for _, c := range d.clients {
		c.Close()
	}
}

// tour prints the demo's narrative: a numbered heading per step, then one
// line per event with the time since the step began and who acted.
type tour struct {
	w     io.Writer
	mu    sync.Mutex
	start time.Time
}

func (t *tour) step(n int, title string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.w, "\n%d. %s\n", n, title)
	t.start = time.Now()
}

// say prints one event by who (a worker, "redis", ...).
func (t *tour) say(who, format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.w, "   %6.3fs  %-9s %s\n", time.Since(t.start).Seconds(), who, fmt.Sprintf(format, args...))
}

// note prints an explanation, not an event.
func (t *tour) note(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.w, "   %7s  %-9s %s\n", "", "", fmt.Sprintf(format, args...))
}

// ms renders a duration in milliseconds for the tour.
func ms(d time.Duration) string {
	return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
}

// secs renders a duration in seconds for the tour.
func secs(d time.Duration) string {
	return fmt.Sprintf("%.2fs", d.Seconds())
}

// pause sleeps for d, standing for work a worker does, or returns ctx's error.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// dropCounters deletes the fencing counters under prefix (one, or one per
// Cluster hash slot its names used), which never lapse by themselves.
func dropCounters(rc rueidis.Client, prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	nodes, addrs := scanTargets(ctx, rc)
	for _, a := range addrs {
		node := nodes[a]
		for cursor := uint64(0); ; {
			e, err := node.Do(ctx, node.B().Scan().Cursor(cursor).Match(globEscape(prefix)+"fence*").Count(1000).Build()).AsScanEntry()
			if err != nil {
				break
			}
			for _, k := range e.Elements {
				node.Do(ctx, node.B().Del().Key(k).Build())
			}
			if cursor = e.Cursor; cursor == 0 {
				break
			}
		}
	}
}
