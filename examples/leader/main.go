// Leader is leader election at work: several worker processes campaign in
// one election, one leads and works, the others wait in line. The leader is
// killed with SIGKILL (nobody resigns for it: its lease simply ends, up to a
// lease after its last renewal, and then the next in line leads), then the
// new leader is asked to stop and resigns (the next leads at once). An
// observer prints every change of leadership as it is pushed.
//
//	go run ./examples/leader                  # in-process Redis
//	go run ./examples/leader -redis host:port # a real Redis
//
// It exits with status 1 if two workers ever said they led at once, if a
// hand-over took longer than it should, or if anything failed; 0 otherwise.
package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/watchdog"
)

// childEnv marks a worker's own process.
const childEnv = "LEADER_CHILD"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

type config struct {
	redis   string
	workers int
	lease   time.Duration
	name    string // the election; set for a worker
	worker  int    // set for a worker
}

// run is the program, or with LEADER_CHILD=1 one worker of it. It returns
// the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	var cfg config
	fs := flag.NewFlagSet("leader", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.redis, "redis", "", "Redis `host:port`; default: an in-process server")
	fs.IntVar(&cfg.workers, "workers", 3, "worker processes that campaign")
	fs.DurationVar(&cfg.lease, "lease", time.Second, "leadership lease, renewed by the watchdog every lease/3")
	fs.StringVar(&cfg.name, "election", "", "internal: the election's name")
	fs.IntVar(&cfg.worker, "worker", 0, "internal: the worker this process is")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if os.Getenv(childEnv) == "1" {
		return runWorker(cfg, stdout, stderr)
	}
	if cfg.workers < 2 || cfg.lease < 100*time.Millisecond {
		fmt.Fprintln(stderr, "leader: need workers >= 2 and lease >= 100ms")
		return 2
	}
	if err := supervise(cfg, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "leader:", err)
		return 1
	}
	return 0
}

// runWorker is one worker: it campaigns until it is interrupted, and works
// while it leads. It writes "leads <term>", "works <term>" and "ends
// <term> <cause>" lines for the supervisor.
func runWorker(cfg config, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c, err := distsync.New(distsync.Options{Addrs: []string{cfg.redis}, RESP2: os.Getenv(childEnv+"_RESP2") == "1", Watchdog: watchdog.Config{Lease: cfg.lease}})
	if err != nil {
		fmt.Fprintln(stderr, "worker:", err)
		return 1
	}
	defer c.Close()
	e, err := c.Election(cfg.name)
	if err != nil {
		fmt.Fprintln(stderr, "worker:", err)
		return 1
	}
	me := "worker-" + strconv.Itoa(cfg.worker) + " pid " + strconv.Itoa(os.Getpid())
	for {
		lead, term, err := e.Campaign(ctx, me)
		if ctx.Err() != nil {
			return 0 // interrupted while waiting in line: nothing is left behind
		}
		if err != nil {
			fmt.Fprintln(stderr, "worker: campaign:", err)
			return 1
		}
		fmt.Fprintln(stdout, "leads", term, time.Now().UnixNano())
		tick := time.NewTicker(cfg.lease / 4)
		for {
			now := time.Now()
			if lead.Err() != nil {
				break
			}
			// The work: anything it writes elsewhere would carry term, so
			// that a deposed leader's late writes are refused. It was
			// leader at now.
			fmt.Fprintln(stdout, "works", term, now.UnixNano())
			select {
			case <-tick.C:
			case <-lead.Done():
			}
		}
		tick.Stop()
		fmt.Fprintln(stdout, "ends", term, time.Now().UnixNano(), context.Cause(lead))
		if ctx.Err() != nil {
			// Interrupted while leading: the leadership ended with ctx,
			// and distsync resigns for it; Resign waits for that.
			e.Resign(lead)
			return 0
		}
	}
}

// worker is a worker process, seen from the supervisor.
type worker struct {
	n   int
	cmd *exec.Cmd
}

// supervise runs the workers and the story, and checks it.
func supervise(cfg config, stdout, stderr io.Writer) error {
	addr, resp2 := cfg.redis, false
	if addr == "" {
		m := miniredis.NewMiniRedis()
		m.ClockTTL(true) // TTLs follow the wall clock
		if err := m.StartAddr("127.0.0.1:0"); err != nil {
			return err
		}
		defer m.Close()
		addr, resp2 = m.Addr(), true
		fmt.Fprintln(stdout, "Using an in-process Redis; pass -redis host:port for a real one.")
	}
	c, err := distsync.New(distsync.Options{Addrs: []string{addr}, RESP2: resp2})
	if err != nil {
		return err
	}
	defer c.Close()
	name := fmt.Sprintf("leader-example-%d", time.Now().UnixNano())
	e, err := c.Election(name)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	states := e.Observe(ctx)
	start := time.Now()
	var mu sync.Mutex
	say := func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(stdout, "%6.2fs  %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, a...))
	}
	// What the workers say: each leadership's window, from its start to the
	// last instant its worker knew it led (by this machine's clock), checked
	// at the end for overlaps.
	type window struct {
		worker     int
		start, end int64
	}
	windows := map[int64]*window{} // by term
	report := func(w int, line string) {
		f := strings.Fields(line)
		if len(f) < 3 {
			return
		}
		term, _ := strconv.ParseInt(f[1], 10, 64)
		at, _ := strconv.ParseInt(f[2], 10, 64)
		mu.Lock()
		defer mu.Unlock()
		switch f[0] {
		case "leads":
			windows[term] = &window{worker: w, start: at, end: at}
			fmt.Fprintf(stdout, "%6.2fs  worker-%d: I lead, term %d\n", time.Since(start).Seconds(), w, term)
		case "works":
			if win := windows[term]; win != nil && win.worker == w {
				win.end = max(win.end, at)
			}
		case "ends":
			fmt.Fprintf(stdout, "%6.2fs  worker-%d: my leadership ended: %s\n", time.Since(start).Seconds(), w, strings.Join(f[3:], " "))
		}
	}

	exe, err := os.Executable()
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	workers := map[string]*worker{} // by pid
	for n := 1; n <= cfg.workers; n++ {
		cmd := exec.Command(exe, "-redis", addr, "-election", name, "-worker", strconv.Itoa(n), "-lease", cfg.lease.String())
		cmd.Env = append(os.Environ(), childEnv+"=1")
		if resp2 {
			cmd.Env = append(cmd.Env, childEnv+"_RESP2=1")
		}
		cmd.Stderr = stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			return err
		}
		if err := cmd.Start(); err != nil {
			return err
		}
		defer cmd.Process.Kill()
		workers[strconv.Itoa(cmd.Process.Pid)] = &worker{n: n, cmd: cmd}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				report(n, sc.Text())
			}
		}()
	}

	// leader waits for the next state in which someone leads, printing
	// every state, and returns its worker.
	leader := func(after int64) (*worker, error) {
		timeout := time.After(5*cfg.lease + 5*time.Second)
		for {
			select {
			case st, ok := <-states:
				if !ok {
					return nil, errors.New("the observer stopped")
				}
				if !st.Leader {
					say("observer: nobody leads")
					continue
				}
				say("observer: %s leads, term %d", st.Value, st.Term)
				if st.Term <= after {
					continue
				}
				_, pid, _ := strings.Cut(st.Value, " pid ")
				if w := workers[pid]; w != nil {
					return w, nil
				}
				return nil, fmt.Errorf("unknown leader %q", st.Value)
			case <-timeout:
				return nil, errors.New("nobody leads")
			}
		}
	}
	first, err := leader(0)
	if err != nil {
		return err
	}
	st, _ := e.Leader(ctx)
	time.Sleep(cfg.lease) // let it work
	say("killing worker-%d (SIGKILL): it will not resign", first.n)
	killed := time.Now()
	if err := first.cmd.Process.Kill(); err != nil {
		return err
	}
	second, err := leader(st.Term)
	if err != nil {
		return err
	}
	took := time.Since(killed)
	// Never before the killed leader's lease ran out on the server, which is
	// up to a lease after the kill (less the time since its last renewal).
	say("handed over in %v, once the killed leader's lease of %v had run out", took.Round(time.Millisecond), cfg.lease)
	if took > cfg.lease+cfg.lease/2 {
		return fmt.Errorf("the hand-over took %v, more than the lease of %v", took, cfg.lease)
	}
	st, _ = e.Leader(ctx)
	time.Sleep(cfg.lease)
	say("interrupting worker-%d: it resigns", second.n)
	if err := second.cmd.Process.Signal(os.Interrupt); err != nil {
		return err
	}
	if _, err := leader(st.Term); err != nil {
		return err
	}
	time.Sleep(cfg.lease / 2)
	say("interrupting every worker")
	for _, w := range workers {
		if w != first {
			w.cmd.Process.Signal(os.Interrupt)
		}
	}
	wg.Wait()
	for _, w := range workers {
		w.cmd.Wait()
	}
	cancel()
	for range states {
	}
	mu.Lock()
	defer mu.Unlock()
	var all []*window
	for _, w := range windows {
		all = append(all, w)
	}
	if len(all) < 3 {
		return fmt.Errorf("%d leaderships, want at least 3", len(all))
	}
	slices.SortFunc(all, func(a, b *window) int { return cmp.Compare(a.start, b.start) })
	for i := 1; i < len(all); i++ {
		if a, b := all[i-1], all[i]; b.start <= a.end {
			return fmt.Errorf("worker-%d led until %v after worker-%d's leadership started", a.worker, time.Duration(a.end-b.start), b.worker)
		}
	}
	fmt.Fprintf(stdout, "%d leaderships, one at a time: handed over by push on resign, once the lease ran out on SIGKILL.\n", len(all))
	return nil
}
