// Parkinglot is the permit-expiring semaphore at work: a lot of 3 spaces, 12
// cars that each park for a random while and leave, and one car that is
// killed while it is parked. Nobody releases that car's space: its permit's
// lease simply ends (the watchdog no longer renews it) and a waiting car gets
// the space then. By default the cars are goroutines and the killed car's
// connection is cut before its Client closes, so nothing gives its permit
// back (Client.Close alone would); with -multi every car is a process of its
// own and one is really killed.
//
//	go run ./examples/parkinglot                  # in-process Redis, cars as goroutines
//	go run ./examples/parkinglot -multi           # every car its own process, one really killed
//	go run ./examples/parkinglot -redis host:port # a real Redis
//
// It prints a timeline and exits with status 1 if more cars than spaces were
// ever parked at once (or anything failed), 0 otherwise.
package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/semaphore"
	"github.com/distsync/distsync/watchdog"
	"github.com/redis/rueidis"
)

// childEnv marks a car's own process in -multi mode.
const childEnv = "PARKINGLOT_CHILD"

// margin is subtracted from the end of a killed car's lease when counting
// parked cars: it covers clock granularity, so that the count never errs
// towards too many.
const margin = 50 * time.Millisecond

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

type config struct {
	redis  string
	spaces int
	cars   int
	lease  time.Duration
	stay   time.Duration
	multi  bool
	seed   uint64
	// set for a car's own process
	car int
	lot string
}

// run is the program: the lot, or with PARKINGLOT_CHILD=1 one car of it.
// It returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	var cfg config
	fs := flag.NewFlagSet("parkinglot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.redis, "redis", "", "Redis `host:port`; default: an in-process server")
	fs.IntVar(&cfg.spaces, "spaces", 3, "spaces in the lot")
	fs.IntVar(&cfg.cars, "cars", 12, "cars that come to park")
	fs.DurationVar(&cfg.lease, "lease", 2*time.Second, "permit lease, renewed by the watchdog every lease/3")
	fs.DurationVar(&cfg.stay, "stay", time.Second, "longest stay; each car stays between half of it and all of it")
	fs.BoolVar(&cfg.multi, "multi", false, "run every car as its own process, and really kill one")
	fs.Uint64Var(&cfg.seed, "seed", 0, "random seed for the stays (0: random)")
	fs.IntVar(&cfg.car, "car", 0, "internal: the car this process is")
	fs.StringVar(&cfg.lot, "lot", "", "internal: the lot's name")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if os.Getenv(childEnv) == "1" {
		return runCar(cfg, stdout, stderr)
	}
	if cfg.spaces < 1 || cfg.cars < 1 || cfg.lease < 30*time.Millisecond || cfg.stay <= 0 {
		fmt.Fprintln(stderr, "parkinglot: need spaces, cars >= 1, lease >= 30ms and stay > 0")
		return 2
	}
	if cfg.seed == 0 {
		cfg.seed = rand.Uint64()
	}
	if err := runLot(cfg, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "parkinglot:", err)
		return 1
	}
	return 0
}

// event is what happens to a car, as it happens.
type event struct {
	at    time.Time
	car   int
	kind  string    // arrive, gate, park, leave, doomed, killed, fail
	until time.Time // doomed: the car's permit is held at least until then
	msg   string    // fail: what went wrong
}

func (e event) encode() string {
	return fmt.Sprintf("EV %d %d %s %d %s", e.at.UnixNano(), e.car, e.kind, e.until.UnixNano(), strconv.Quote(e.msg))
}

func decode(line string) (event, bool) {
	f := strings.SplitN(line, " ", 6)
	if len(f) != 6 || f[0] != "EV" {
		return event{}, false
	}
	at, err1 := strconv.ParseInt(f[1], 10, 64)
	car, err2 := strconv.Atoi(f[2])
	until, err3 := strconv.ParseInt(f[4], 10, 64)
	msg, err4 := strconv.Unquote(f[5])
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return event{}, false
	}
	return event{at: time.Unix(0, at), car: car, kind: f[3], until: time.Unix(0, until), msg: msg}, true
}

// drive is one car: arrive, wait for signal, then for a space, park and
// leave. Car 1 (the doomed car) parks at once, stays until signal, then
// reports when its lease ends at the earliest and returns errDoomed, still
// parked.
func drive(ctx context.Context, lot *semaphore.PermitSemaphore, car int, stay time.Duration, signal <-chan struct{}, emit func(event)) error {
	emit(event{at: time.Now(), car: car, kind: "arrive"})
	if car != 1 {
		<-signal
	}
	p, err := lot.Acquire(ctx)
	if err != nil {
		return err
	}
	emit(event{at: time.Now(), car: car, kind: "park"})
	if car == 1 {
		<-signal
		sent := time.Now()
		ttl, err := p.TTL(ctx)
		if err != nil {
			return err
		}
		emit(event{at: time.Now(), car: car, kind: "doomed", until: sent.Add(ttl - margin)})
		return errDoomed
	}
	select {
	case <-time.After(stay):
	case <-p.Context().Done():
		return fmt.Errorf("space lost while parked: %w", context.Cause(p.Context()))
	}
	emit(event{at: time.Now(), car: car, kind: "leave"})
	return lot.Release(ctx, p)
}

var errDoomed = errors.New("doomed")

func stayOf(cfg config, car int) time.Duration {
	r := rand.New(rand.NewPCG(cfg.seed, uint64(car)))
	return cfg.stay/2 + time.Duration(r.Int64N(int64(cfg.stay/2)+1))
}

func clientOptions(addr string, resp2 bool, lease time.Duration) distsync.Options {
	return distsync.Options{Addrs: []string{addr}, RESP2: resp2, Watchdog: watchdog.Config{Lease: lease}}
}

// runCar is a car's own process (-multi): it writes its events to stdout.
func runCar(cfg config, stdout, stderr io.Writer) int {
	c, err := distsync.New(clientOptions(cfg.redis, os.Getenv(childEnv+"_RESP2") == "1", cfg.lease))
	if err != nil {
		fmt.Fprintln(stderr, "parkinglot car:", err)
		return 1
	}
	defer c.Close()
	lot, err := c.PermitSemaphore(cfg.lot)
	if err != nil {
		fmt.Fprintln(stderr, "parkinglot car:", err)
		return 1
	}
	var mu sync.Mutex
	emit := func(e event) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(stdout, e.encode())
	}
	// The lot writes a line to stdin to open the gate, or to kill car 1.
	signal := make(chan struct{})
	go func() {
		bufio.NewReader(os.Stdin).ReadString('\n')
		close(signal)
	}()
	err = drive(context.Background(), lot, cfg.car, stayOf(cfg, cfg.car), signal, emit)
	if errors.Is(err, errDoomed) {
		time.Sleep(time.Minute) // parked until the lot kills this process
		return 1
	}
	if err != nil {
		emit(event{at: time.Now(), car: cfg.car, kind: "fail", msg: err.Error()})
		return 1
	}
	return 0
}

// runLot sets up the lot, runs the cars and prints the timeline.
func runLot(cfg config, stdout, stderr io.Writer) error {
	addr, resp2, where := cfg.redis, false, "Redis at "+cfg.redis
	if addr == "" {
		m, err := inProcessRedis()
		if err != nil {
			return err
		}
		defer m.Close()
		addr, resp2, where = m.Addr(), true, "an in-process Redis (miniredis)"
	}
	c, err := distsync.New(clientOptions(addr, resp2, cfg.lease))
	if err != nil {
		return err
	}
	defer c.Close()
	ctx := context.Background()
	name := fmt.Sprintf("parkinglot-%d", time.Now().UnixNano())
	lot, err := c.PermitSemaphore(name)
	if err != nil {
		return err
	}
	defer lot.Delete(ctx)
	if _, err := lot.TrySetPermits(ctx, int64(cfg.spaces)); err != nil {
		return err
	}
	mode, killed := "every car a goroutine", "its connection is cut, so its watchdog stops and nothing gives its permit back"
	if cfg.multi {
		mode, killed = "every car its own process", "its process is killed"
	}
	fmt.Fprintf(stdout, "Parking lot: %d spaces, %d cars, lease %v, on %s, %s (seed %d).\n",
		cfg.spaces, cfg.cars, cfg.lease, where, mode, cfg.seed)
	fmt.Fprintf(stdout, "Car 1 is killed while parked: %s. Nobody releases its space.\n\n", killed)

	tl := newTimeline(stdout, cfg.spaces, cfg.cars)
	events := make(chan event, 4*cfg.cars)
	emit := func(e event) { events <- e }
	// The printer orders events by time, with a short delay, since cars in
	// other processes report over their own pipes.
	printed := make(chan struct{})
	go func() {
		defer close(printed)
		tl.follow(events, 100*time.Millisecond)
	}()

	// Car 1 parks first. The others line up, and drive in when the gate
	// opens, once all have come (processes take a while to start). Car 1 is
	// killed when the lot is full, so that cars wait for its space.
	gate, kill := make(chan struct{}), make(chan struct{})
	fails := make(chan error, cfg.cars)
	startCar := func(wg *sync.WaitGroup, car int, signal <-chan struct{}) {
		wg.Go(func() {
			var err error
			if cfg.multi {
				err = carProcess(cfg, addr, resp2, name, car, signal, stderr, emit)
			} else {
				err = carGoroutine(ctx, cfg, lot, addr, resp2, name, car, signal, emit)
			}
			if err != nil {
				fails <- fmt.Errorf("car %d: %w", car, err)
				emit(event{at: time.Now(), car: car, kind: "fail", msg: err.Error()})
			}
		})
	}
	var first, others sync.WaitGroup
	startCar(&first, 1, kill)
	firstDone := done(&first)
	select {
	case <-tl.firstPark:
		for car := 2; car <= cfg.cars; car++ {
			startCar(&others, car, gate)
		}
	case <-firstDone:
	}
	othersDone := done(&others)
	for _, step := range []struct{ when, then chan struct{} }{{tl.allArrived, gate}, {tl.full, kill}} {
		select {
		case <-step.when:
		case <-othersDone:
		case <-firstDone:
		}
		if step.then == gate {
			emit(event{at: time.Now(), kind: "gate"})
		}
		close(step.then)
	}
	<-othersDone
	<-firstDone
	close(events)
	<-printed
	close(fails)
	var errs []error
	for err := range fails {
		errs = append(errs, err)
	}
	if err := tl.summary(cfg.spaces); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// done returns a channel closed when wg is done.
func done(wg *sync.WaitGroup) chan struct{} {
	c := make(chan struct{})
	go func() {
		wg.Wait()
		close(c)
	}()
	return c
}

// carGoroutine runs a car in this process. The doomed car has a connection
// and a Client of its own. Its "crash" closes the connection first, so that
// Client.Close (which would give the permit back) cannot reach Redis: the
// watchdog stops and nobody releases the permit, as if the process died.
func carGoroutine(ctx context.Context, cfg config, lot *semaphore.PermitSemaphore, addr string, resp2 bool, name string, car int, signal <-chan struct{}, emit func(event)) error {
	if car != 1 {
		return drive(ctx, lot, car, stayOf(cfg, car), signal, emit)
	}
	rc, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress:       []string{addr},
		AlwaysRESP2:       resp2,
		ForceSingleClient: resp2,
		DisableCache:      true,
	})
	if err != nil {
		return err
	}
	c, err := distsync.FromClient(rc, clientOptions(addr, resp2, cfg.lease))
	if err != nil {
		rc.Close()
		return err
	}
	own, err := c.PermitSemaphore(name)
	if err == nil {
		err = drive(ctx, own, car, stayOf(cfg, car), signal, emit)
	}
	if errors.Is(err, errDoomed) {
		rc.Close() // the crash: the connection goes first
		c.Close()
		emit(event{at: time.Now(), car: car, kind: "killed"})
		return nil
	}
	c.Close()
	rc.Close()
	return err
}

// carProcess runs a car as a child process and relays its events. The car
// is told on its stdin when signal is closed; car 1 is killed when it
// reports being doomed.
func carProcess(cfg config, addr string, resp2 bool, name string, car int, signal <-chan struct{}, stderr io.Writer, emit func(event)) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	args := []string{"-redis", addr, "-lot", name, "-car", strconv.Itoa(car),
		"-lease", cfg.lease.String(), "-stay", cfg.stay.String(), "-seed", strconv.FormatUint(cfg.seed, 10)}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	if resp2 {
		cmd.Env = append(cmd.Env, childEnv+"_RESP2=1")
	}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	defer close(exited)
	go func() {
		select {
		case <-signal:
			io.WriteString(in, "go\n")
		case <-exited:
		}
	}()
	killed := false
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		e, ok := decode(sc.Text())
		if !ok {
			continue
		}
		emit(e)
		if e.kind == "doomed" {
			if err := cmd.Process.Kill(); err != nil {
				return err
			}
			killed = true
			emit(event{at: time.Now(), car: car, kind: "killed"})
		}
	}
	err = cmd.Wait()
	if killed {
		return nil
	}
	return err
}

// timeline prints events and checks how many cars were parked at once.
type timeline struct {
	out        io.Writer
	start      time.Time
	slots      []int // car in each space, 0 when free
	zombie     int   // the killed car while its space is taken
	killedAt   time.Time
	returned   time.Duration // from the kill until the killed car's space was taken again
	all        []event
	cars       int           // arrivals to wait for
	firstPark  chan struct{} // closed when car 1 has parked
	allArrived chan struct{} // closed when every car has arrived
	full       chan struct{} // closed when every space is first taken
}

func newTimeline(out io.Writer, spaces, cars int) *timeline {
	return &timeline{out: out, start: time.Now(), slots: make([]int, spaces), cars: cars,
		firstPark: make(chan struct{}), allArrived: make(chan struct{}), full: make(chan struct{})}
}

// follow handles events in the order they happened, each delay after it
// arrived at the latest, until events is closed.
func (t *timeline) follow(events <-chan event, delay time.Duration) {
	var pending []event
	flush := func(before time.Time) {
		slices.SortStableFunc(pending, func(a, b event) int { return a.at.Compare(b.at) })
		n := 0
		for n < len(pending) && pending[n].at.Before(before) {
			t.handle(pending[n])
			n++
		}
		pending = pending[n:]
	}
	tick := time.NewTicker(delay / 4)
	defer tick.Stop()
	for {
		select {
		case e, ok := <-events:
			if !ok {
				flush(time.Now().Add(time.Hour))
				return
			}
			pending = append(pending, e)
		case now := <-tick.C:
			flush(now.Add(-delay))
		}
	}
}

func (t *timeline) handle(e event) {
	t.all = append(t.all, e)
	switch e.kind {
	case "gate":
		t.line(e, "every car has come: the gate opens")
	case "arrive":
		t.line(e, "car %2d arrives", e.car)
		if t.cars--; t.cars == 0 {
			close(t.allArrived)
		}
	case "park":
		if e.car == 1 {
			close(t.firstPark)
		}
		slot := slices.Index(t.slots, 0)
		if slot < 0 && t.zombie != 0 {
			// The killed car's space was given away: its lease ended.
			slot = slices.Index(t.slots, t.zombie)
			t.slots[slot] = 0
			t.returned = e.at.Sub(t.killedAt)
			t.line(e, "car %2d's space is free again: its lease ran out %.1fs after the kill, and no one released it",
				t.zombie, t.returned.Seconds())
			t.zombie = 0
		}
		if slot < 0 {
			t.line(e, "car %2d parks, but every space is taken!", e.car)
			return
		}
		t.slots[slot] = e.car
		t.line(e, "car %2d parks in space %d", e.car, slot+1)
		if !slices.Contains(t.slots, 0) && !closed(t.full) {
			close(t.full)
		}
	case "leave":
		if i := slices.Index(t.slots, e.car); i >= 0 {
			t.slots[i] = 0
		}
		t.line(e, "car %2d leaves", e.car)
	case "doomed":
		t.line(e, "car %2d is about to be killed while parked", e.car)
	case "killed":
		t.zombie, t.killedAt = e.car, e.at
		t.line(e, "car %2d is killed: its space stays taken until its lease ends", e.car)
	case "fail":
		t.line(e, "car %2d FAILED: %s", e.car, e.msg)
	}
}

func closed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func (t *timeline) line(e event, format string, a ...any) {
	var spaces strings.Builder
	for _, car := range t.slots {
		switch {
		case car == 0:
			spaces.WriteString("  . ")
		case car == t.zombie:
			fmt.Fprintf(&spaces, " x%-2d", car)
		default:
			fmt.Fprintf(&spaces, " %2d ", car)
		}
	}
	fmt.Fprintf(t.out, "%6.2fs [%s]  %s\n", e.at.Sub(t.start).Seconds(), spaces.String(), fmt.Sprintf(format, a...))
}

// summary counts the most cars parked at once, from the time each car parked
// (after its permit was granted) to the time it left (before its release),
// and for the killed car until its lease ended at the earliest. An error says
// that more than spaces were parked at once.
func (t *timeline) summary(spaces int) error {
	type edge struct {
		at time.Time
		d  int
	}
	var edges []edge
	parked := 0
	for _, e := range t.all {
		switch e.kind {
		case "park":
			parked++
			edges = append(edges, edge{e.at, +1})
		case "leave":
			edges = append(edges, edge{e.at, -1})
		case "doomed":
			edges = append(edges, edge{e.until, -1})
		}
	}
	// Leaving before parking at the same instant: a space handed over.
	slices.SortFunc(edges, func(a, b edge) int {
		return cmp.Or(a.at.Compare(b.at), cmp.Compare(a.d, b.d))
	})
	most, now := 0, 0
	var when time.Time
	for _, e := range edges {
		now += e.d
		if now > most {
			most, when = now, e.at
		}
	}
	fmt.Fprintf(t.out, "\n%d cars parked, at most %d at once in %d spaces.\n", parked, most, spaces)
	if t.returned > 0 {
		fmt.Fprintf(t.out, "The killed car's space came back %.1fs after the kill, without any Release.\n", t.returned.Seconds())
	}
	if most > spaces {
		return fmt.Errorf("%d cars were parked at once at %.2fs, in %d spaces", most, when.Sub(t.start).Seconds(), spaces)
	}
	return nil
}

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
