// Command bench measures distsync side by side with other Go lock libraries
// (go-redsync/redsync v4, bsm/redislock, rueidislock) on one Redis, in one
// run, and prints one table. It is its own module so that those libraries
// never become dependencies of distsync.
//
//	cd bench && go run .            # full run, about 3 minutes
//	cd bench && go run . -quick     # about 30 seconds
//
// It starts its own redis-server (from PATH) on a free loopback port and stops
// it at the end; -redis host:port uses a running server instead (its data is
// flushed). Every scenario runs each library in turn, round after round with
// the order rotated (A B C D, B C D A, ...), so that machine noise hits all
// alike; the figures of the rounds are merged.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/rueidis"
)

// scenario is one row group of the table. To add one, write its func(run)
// result in scenarios.go and list it here; a scenario of a primitive only
// distsync has sets distsyncOnly, uses run.ds, and the peers show n/a.
type scenario struct {
	id, title    string
	unit         string // throughput unit, "" when the row is about latency
	run          func(run) result
	distsyncOnly bool // the peers have no such primitive: n/a
	waits        bool // someone waits for a held name: the floor cannot run it
	// redlock: run.l is the library's Redlock over redlockMasters
	// independent masters (library.openRedlock); n/a without one.
	redlock bool
}

// redlockMasters is how many masters the Redlock scenarios use: the server of
// the other scenarios and as many more started beside it.
const redlockMasters = 3

// extra are the servers started beside the first, which ^C stops too (its
// os.Exit skips the deferred stops).
var extra struct {
	sync.Mutex
	servers []*server
}

func stopExtra() {
	extra.Lock()
	defer extra.Unlock()
	for _, s := range extra.servers {
		s.stop()
	}
}

var scenarios = []scenario{
	{id: "1a", title: "uncontended lock+unlock, G=1", unit: "pairs/s", run: uncontended(1)},
	{id: "1b", title: "uncontended lock+unlock, G=64", unit: "pairs/s", run: uncontended(64)},
	{id: "2", title: "contended, 16 goroutines on 1 name (wait)", unit: "acq/s", run: contended(16), waits: true},
	{id: "2m", title: "contended, 16 Clients on 1 name (wait)", unit: "acq/s", run: contendedClients(16), waits: true},
	{id: "3", title: "handoff: release -> blocked waiter holds", run: handoff, waits: true},
	{id: "5", title: "fair lock, 1 000 queued waiters", unit: "handoffs/s", run: fairQueue(1000), distsyncOnly: true},
	{id: "6", title: "semaphore 100 permits, 256 goroutines", unit: "pairs/s", run: semaphoreLoop(100, 256, false), distsyncOnly: true},
	{id: "6p", title: "6 with the permit semaphore (watchdog leases)", unit: "pairs/s", run: semaphoreLoop(100, 256, true), distsyncOnly: true},
	{id: "7", title: "read-write lock, 95% reads, 64 goroutines", unit: "ops/s", run: rwLoop(64, 0.05, false), distsyncOnly: true},
	{id: "7w", title: "7 with rwlock.PreferWriters", unit: "ops/s", run: rwLoop(64, 0.05, true), distsyncOnly: true},
	{id: "8", title: "Redlock over 3 masters: handoff", run: handoff, waits: true, redlock: true},
	{id: "9", title: "Redlock over 3 masters, 16 goroutines on 1 name (wait)", unit: "acq/s", run: contended(16), waits: true, redlock: true},
}

type config struct {
	redis      string
	quick      bool
	rounds     int
	dur        time.Duration
	reps       int
	leases     []int
	lease      time.Duration
	peerLeases int
	footprint  []int // held names, waiters, their names (scenario f)
	libs       []string
	only       []string
	cpuprofile string
}

func main() {
	var cfg config
	var leases, libs, only string
	flag.StringVar(&cfg.redis, "redis", "", "use the Redis at host:port (its data is flushed) instead of starting redis-server")
	flag.BoolVar(&cfg.quick, "quick", false, "a short run (about 30 s): 1 round, shorter windows, fewer repetitions")
	flag.IntVar(&cfg.rounds, "rounds", 0, "rounds of each scenario (default 3, quick 1)")
	flag.DurationVar(&cfg.dur, "dur", 0, "timed window of a library in one round (default 1.5s, quick 0.5s)")
	flag.IntVar(&cfg.reps, "handoff", 0, "handoff repetitions per library, over all rounds (default 200, quick 40)")
	flag.StringVar(&leases, "leases", "", "held-lease counts of the watchdog scenario (default 10000,100000, quick 10000)")
	flag.DurationVar(&cfg.lease, "lease", 0, "distsync watchdog lease in the watchdog scenario (default 30s = distsync's default, quick 3s)")
	flag.IntVar(&cfg.peerLeases, "peer-leases", 2000, "most leases rueidislock holds in the watchdog scenario")
	var footprint string
	flag.StringVar(&footprint, "footprint", "", "held names, waiters and the names they wait for in the footprint scenario f (default 100000,100000,1000, quick 10000,10000,100)")
	flag.StringVar(&libs, "libs", "floor,exact-floor,distsync,redsync,redislock,rueidislock,rueidislock-m1", "libraries to run (floor: SET NX PX and compare-and-delete, where nobody waits; exact-floor: the least pair with distsync's exactness (fencing token, finished mark, waiters' check), where nobody waits; rueidislock: its defaults, KeyMajority 2; rueidislock-m1: its README's one-instance options, KeyMajority 1 and NoLoopTracking)")
	flag.DurationVar(&peerFlush, "peer-flush", 0, "rueidis's MaxFlushDelay for rueidislock's clients (default 0, as its documentation configures them; distsync's default is 20µs, the floors' too)")
	flag.StringVar(&only, "only", "", "scenario ids to run, e.g. 1a,3,4 (default all)")
	flag.StringVar(&cfg.cpuprofile, "cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.Parse()
	cfg.defaults(leases, libs, only, footprint)
	if err := benchmark(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func (c *config) defaults(leases, libs, only, footprint string) {
	pick := func(v *int, full, quick int) {
		if *v == 0 {
			*v = full
			if c.quick {
				*v = quick
			}
		}
	}
	pick(&c.rounds, 3, 1)
	pick(&c.reps, 200, 40)
	if c.dur == 0 {
		c.dur = 1500 * time.Millisecond
		if c.quick {
			c.dur = 500 * time.Millisecond
		}
	}
	if c.lease == 0 {
		c.lease = 30 * time.Second
		if c.quick {
			c.lease = 3 * time.Second
		}
	}
	if leases == "" {
		leases = "10000,100000"
		if c.quick {
			leases = "10000"
		}
	}
	for _, s := range strings.Split(leases, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && n > 0 {
			c.leases = append(c.leases, n)
		}
	}
	if footprint == "" {
		footprint = "100000,100000,1000"
		if c.quick {
			footprint = "10000,10000,100"
		}
	}
	for _, s := range strings.Split(footprint, ",") {
		n, _ := strconv.Atoi(strings.TrimSpace(s))
		c.footprint = append(c.footprint, max(n, 1))
	}
	for len(c.footprint) < 3 {
		c.footprint = append(c.footprint, 1)
	}
	c.libs = strings.Split(libs, ",")
	if only != "" {
		c.only = strings.Split(only, ",")
	}
}

func (c *config) wants(id string) bool { return len(c.only) == 0 || slices.Contains(c.only, id) }

func benchmark(cfg config) error {
	addr, pid := cfg.redis, 0
	if addr == "" {
		srv, err := startServer()
		if err != nil {
			return err
		}
		defer srv.stop()
		// Stop the server on ^C too.
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		go func() {
			<-sig
			srv.stop()
			stopExtra()
			os.Exit(130)
		}()
		addr, pid = srv.addr, srv.cmd.Process.Pid
	}
	admin, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableCache: true, ForceSingleClient: true})
	if err != nil {
		return fmt.Errorf("connect to %s: %w", addr, err)
	}
	defer admin.Close()
	version, _ := serverVersion(admin)
	flush := func() { admin.Do(context.Background(), admin.B().Flushall().Sync().Build()) }
	flush()

	if cfg.cpuprofile != "" {
		f, err := os.Create(cfg.cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}

	var libs []library
	for _, name := range cfg.libs {
		i := slices.IndexFunc(libraries, func(l library) bool { return l.name == name })
		if i < 0 {
			return fmt.Errorf("unknown library %q", name)
		}
		libs = append(libs, libraries[i])
	}
	lockers := make([]locker, len(libs))
	for i, l := range libs {
		if lockers[i], err = l.open(addr); err != nil {
			return fmt.Errorf("%s: %w", l.name, err)
		}
		defer lockers[i].close()
		warmUp(lockers[i], "warmup:"+l.name)
	}
	flush()

	// The Redlock scenarios' masters: addr and servers started beside it.
	masters := []string{addr}
	rlockers := make([]locker, len(libs))
	if slices.ContainsFunc(scenarios, func(sc scenario) bool { return sc.redlock && cfg.wants(sc.id) }) {
		for range redlockMasters - 1 {
			srv, err := startServer()
			if err != nil {
				return err
			}
			defer srv.stop()
			extra.Lock()
			extra.servers = append(extra.servers, srv)
			extra.Unlock()
			masters = append(masters, srv.addr)
			c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{srv.addr}, DisableCache: true, ForceSingleClient: true})
			if err != nil {
				return fmt.Errorf("connect to %s: %w", srv.addr, err)
			}
			defer c.Close()
			prev := flush
			flush = func() { prev(); c.Do(context.Background(), c.B().Flushall().Sync().Build()) }
		}
		for i, l := range libs {
			if l.openRedlock == nil || l.neverWaits {
				continue
			}
			if rlockers[i], err = l.openRedlock(masters); err != nil {
				return fmt.Errorf("%s redlock: %w", l.name, err)
			}
			defer rlockers[i].close()
			warmUp(rlockers[i], "warmup:redlock:"+l.name)
		}
		flush()
	}

	rep := report{cfg: cfg, addr: addr, version: version, libs: libs, started: time.Now()}
	rep.header(os.Stdout)
	for _, sc := range scenarios {
		if !cfg.wants(sc.id) {
			continue
		}
		results := make([]result, len(libs))
		for round := range cfg.rounds {
			for k := range libs {
				i := (k + round) % len(libs) // rotate the order every round
				r := run{l: lockers[i], prefix: fmt.Sprintf("bench:%s:%d:%s", sc.id, round, libs[i].name), dur: cfg.dur}
				open := libs[i].open
				r.open = func() (locker, error) { return open(addr) }
				r.reps = (cfg.reps + cfg.rounds - 1) / cfg.rounds
				if d, ok := lockers[i].(dsLocker); ok {
					r.ds = d.c
				}
				if sc.redlock {
					r.l, r.ds = rlockers[i], nil
					openRL := libs[i].openRedlock
					r.open = func() (locker, error) { return openRL(masters) }
				}
				if sc.distsyncOnly && r.ds == nil || sc.waits && libs[i].neverWaits || sc.redlock && r.l == nil {
					results[i].na = true
					continue
				}
				before, cpu0, srv0 := cmdStats(admin), cpuTime(), serverCPU(pid)
				var msgs0, wakes0 int64
				if r.ds != nil {
					st := r.ds.Stats()
					msgs0, wakes0 = st.NotifierMessages, st.NotifierWakes
				}
				res := sc.run(r)
				res.clientCPU, res.serverCPU = cpuTime()-cpu0, serverCPU(pid)-srv0
				if r.ds != nil {
					st := r.ds.Stats()
					msgs, wakes := st.NotifierMessages, st.NotifierWakes
					res.msgs, res.wakes = res.msgs+msgs-msgs0, res.wakes+wakes-wakes0
				}
				after := cmdStats(admin)
				res.cmds, res.pubs = cmdDelta(before, after)
				res.serverCmd = cmdTime(before, after, libs[i].direct)
				res.cmds -= res.harness
				results[i].merge(res)
				flush()
			}
		}
		rep.rows = append(rep.rows, row{sc: sc, results: results})
		fmt.Fprintf(os.Stderr, "bench: %s done (%s)\n", sc.id, time.Since(rep.started).Round(time.Second))
	}
	if cfg.wants("4") {
		for _, n := range cfg.leases {
			for _, l := range libs {
				var w wdResult
				prefix := fmt.Sprintf("bench:4:%d:%s", n, l.name)
				switch l.name {
				case "distsync":
					w = watchdogDistsync(addr, admin, n, cfg.lease, prefix)
				case "rueidislock":
					w = watchdogRueidislock(addr, admin, min(n, cfg.peerLeases), prefix)
					if w.n < n {
						w.note = fmt.Sprintf("capped at -peer-leases %d: with its defaults every extension's own invalidation triggers another, so larger counts saturate the client", cfg.peerLeases)
					}
				case "rueidislock-m1":
					w = wdResult{lib: l.name, n: n, skipped: "not run: the rueidislock row has its renewal"}
				default:
					w = wdResult{lib: l.name, n: n, skipped: "n/a: no lease renewal"}
				}
				rep.watchdog = append(rep.watchdog, w)
				flush()
			}
			fmt.Fprintf(os.Stderr, "bench: 4 (%d leases) done (%s)\n", n, time.Since(rep.started).Round(time.Second))
		}
	}
	if cfg.wants("f") && slices.ContainsFunc(libs, func(l library) bool { return l.name == "distsync" }) {
		f := cfg.footprint
		x := footprint(addr, admin, f[0], f[1], f[2], "bench:f")
		rep.footprint = &x
		flush()
		fmt.Fprintf(os.Stderr, "bench: f done (%s)\n", time.Since(rep.started).Round(time.Second))
	}
	rep.print(os.Stdout)
	return nil
}

// warmUp makes each library open its connections and load its scripts
// before anything is timed.
func warmUp(l locker, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan struct{})
	for g := range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 20 {
				if rel, err := l.lock(ctx, name+":"+strconv.Itoa(g)); err == nil {
					rel()
				}
			}
		}()
	}
	for range 8 {
		<-done
	}
}
