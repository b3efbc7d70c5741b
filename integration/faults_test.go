package integration_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/acquire"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
	"github.com/distsync/distsync/mutex"
	"github.com/distsync/distsync/semaphore"
	"github.com/distsync/distsync/watchdog"
)

// Fault scenarios: each puts holders of one lock through a fault, records
// their holds in a history (history_test.go) and asserts what the deployment
// promises: exclusion where it is promised, and the double grant where the
// safety model (docs/safety.md) says it can happen. Leases are short (1-2 s) to keep them fast; a
// sleep in a scenario is the length of the fault it injects, never a wait for
// something to happen.

// logWriter sends a Client's log lines (lost leases, retries) to the test log.
type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// clientAt returns a Client on addr with the watchdog lease, logging to the
// test, closed at cleanup.
//
// Its WaiterWindow is the lease, not the default 30 s: a waiter that wakes
// when a lease ends on the server can arrive in the lease's last millisecond,
// when the lock script reports 0 ms left, which the acquire loop takes for
// "unknown" and sleeps WaiterWindow/2 on (15 s by default) instead of trying
// again at once. The short window bounds that cost without hiding it.
func clientAt(t *testing.T, addr string, lease time.Duration, edit ...func(*distsync.Options)) *distsync.Client {
	t.Helper()
	log := slog.New(slog.NewTextHandler(logWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return connect(t, distsync.Options{Addrs: []string{addr}, Watchdog: watchdog.Config{Lease: lease}, WaiterWindow: lease, Logger: log}, edit...)
}

// connect returns a Client with options o adjusted by edit, closed at
// cleanup.
func connect(t *testing.T, o distsync.Options, edit ...func(*distsync.Options)) *distsync.Client {
	t.Helper()
	for _, f := range edit {
		f(&o)
	}
	c, err := distsync.New(o)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

func mutexOf(t *testing.T, c *distsync.Client, name string) *mutex.Mutex {
	t.Helper()
	m, err := c.Mutex(name)
	require.NoError(t, err)
	return m
}

// scene is one lock seen by a holder's Client (a, on holderAddr) and
// another Client (b, on otherAddr), with the history of its holds.
type scene struct {
	a, b   *distsync.Client
	ma, mb *mutex.Mutex
	h      *history
	lease  time.Duration // the watchdog lease of both Clients
}

// newScene connects both Clients with the watchdog lease; editA adjusts the
// holder's options only.
func newScene(t *testing.T, what, holderAddr, otherAddr string, lease time.Duration, editA ...func(*distsync.Options)) *scene {
	t.Helper()
	sc := &scene{a: clientAt(t, holderAddr, lease, editA...), b: clientAt(t, otherAddr, lease), h: newHistory(what), lease: lease}
	sc.ma, sc.mb = mutexOf(t, sc.a, "lock"), mutexOf(t, sc.b, "lock")
	return sc
}

// hold takes the lock on the holder's side, with the watchdog lease when
// lease is 0, and works under it.
func (sc *scene) hold(t *testing.T, lease time.Duration) (context.Context, *holding) {
	t.Helper()
	ctx, err := sc.ma.TryLock(context.Background(), 0, lease)
	require.NoError(t, err)
	return ctx, holdAndWork(t, sc.h, "holder", sc.ma, ctx)
}

// take takes the lock on the other side at once and records the hold.
func (sc *scene) take(t *testing.T, who string) (context.Context, *hold) {
	t.Helper()
	ctx, err := tryLock(sc.mb, 0, 0)
	require.NoError(t, err, "%s is granted the lock", who)
	tok, err := sc.mb.Token(ctx)
	require.NoError(t, err)
	return ctx, sc.h.acquired(who, tok)
}

// holding is a holder at work under its lock in a goroutine.
type holding struct {
	hd   *hold
	ctx  context.Context
	m    *mutex.Mutex
	stop chan struct{}
	done chan bool
}

// holdAndWork records the hold ctx carries (m just granted it) and works under it
// until stop or the loss of the lease.
func holdAndWork(t *testing.T, h *history, who string, m *mutex.Mutex, ctx context.Context) *holding {
	t.Helper()
	tok, err := m.Token(ctx)
	require.NoError(t, err)
	w := &holding{hd: h.acquired(who, tok), ctx: ctx, m: m, stop: make(chan struct{}), done: make(chan bool, 1)}
	go func() { w.done <- w.hd.work(ctx, w.stop) }()
	t.Cleanup(func() { w.finish() })
	return w
}

// finish stops the work and reports whether the hold was alive then. Only
// the first call waits; later ones report false.
func (w *holding) finish() bool {
	select {
	case <-w.stop:
		return false
	default:
	}
	close(w.stop)
	return <-w.done
}

// release stops the work and unlocks if the hold is alive.
func (w *holding) release(t *testing.T) {
	t.Helper()
	if w.finish() {
		require.NoError(t, w.hd.release(w.ctx, unlock(w.m)))
	}
}

// transient reports whether err is a connection error that a caller retries:
// after a restart or a failover, the first command on each connection the
// client had fails with it (rueidis resends no script, since the first send
// may have run). The Cluster redirections and refusals during a failover
// are transient too. Typed distsync errors are not.
func transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var ne net.Error
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.As(err, &ne) {
		return true
	}
	var re *rueidis.RedisError
	if errors.As(err, &re) {
		_, redirect := re.IsRedirect()
		return redirect || re.IsTryAgain() || re.IsClusterDown() || re.IsLoading() ||
			strings.HasPrefix(re.Error(), "READONLY") || strings.HasPrefix(re.Error(), "MASTERDOWN")
	}
	return false
}

// retry runs f until it returns nil or an error that is not transient, at
// most 20 times.
func retry(f func() error) error {
	for i := 0; ; i++ {
		err := f()
		if !transient(err) || i == 20 {
			return err
		}
		time.Sleep(time.Duration(i+1) * 10 * time.Millisecond) // back-off before a reconnect
	}
}

// tryLock is m.TryLock retried on transient errors.
func tryLock(m *mutex.Mutex, wait, lease time.Duration) (ctx context.Context, err error) {
	err = retry(func() error {
		ctx, err = m.TryLock(context.Background(), wait, lease)
		return err
	})
	return ctx, err
}

// unlock is m.Unlock retried on transient errors, which Unlock allows: a
// retry of a release the server applied returns nil and releases nothing
// more.
func unlock(m *mutex.Mutex) func(context.Context) error {
	return func(ctx context.Context) error {
		return retry(func() error { return m.Unlock(ctx) })
	}
}

// waiter waits for m (at most wait) in a goroutine; once granted it records
// the hold and releases it at once. The channel gets the acquire error.
func waiter(h *history, who string, m *mutex.Mutex, wait time.Duration) <-chan error {
	got := make(chan error, 1)
	go func() {
		ctx, err := tryLock(m, wait, 0)
		if err != nil {
			got <- err
			return
		}
		tok, err := m.Token(ctx)
		if err != nil {
			got <- err
			return
		}
		got <- h.acquired(who, tok).release(ctx, unlock(m))
	}()
	return got
}

// receive waits for a result, failing after a generous bound.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(time.Minute):
		t.Fatalf("%s: nothing within a minute", what)
		panic("unreachable")
	}
}

// awaitRenewals waits until the server shows n renewals of m's lease by its
// holder: polled through another handle on the same lock (m), the remaining
// TTL only falls until a renewal raises it. Errors are ignored: the server
// may be coming back from a fault.
func awaitRenewals(t *testing.T, m *mutex.Mutex, n int) {
	t.Helper()
	var prev time.Duration
	seen := 0
	require.Eventually(t, func() bool {
		ttl, err := m.TTL(context.Background())
		if err != nil {
			return false
		}
		if prev > 0 && ttl > prev {
			seen++
		}
		prev = ttl
		return seen >= n
	}, time.Minute, time.Millisecond, "the server did not see %d renewals", n)
}

// outlastShortFault holds the lock with the watchdog lease through a fault,
// from start to end, a quarter of the lease long, while a waiter on the other
// side queues for the lock. The last renewal was at most a third of the
// lease before the fault, so the fault ends well before the lease that
// renewal set: the holder must keep its lock (the server sees its watchdog
// renew after the fault and no loss is reported) and the waiter must be
// granted only after the holder released.
func (sc *scene) outlastShortFault(t *testing.T, start, end func()) {
	t.Helper()
	ctx, w := sc.hold(t, 0)
	start()
	got := waiter(sc.h, "waiter", sc.mb, time.Minute)
	time.Sleep(sc.lease / 4)
	end()
	awaitRenewals(t, sc.mb, 2) // a renewal held back by the fault, or its retry, and the next
	require.Zero(t, sc.a.Stats().LostLeases)
	require.True(t, w.hd.alive(ctx), "the holder keeps its lock through a short fault")
	w.release(t)
	require.NoError(t, receive(t, got, "waiter"))
	requireExclusive(t, sc.h)
}

// awaitLoss waits for the holder's context to end with ErrLeaseLost, failing
// after a generous bound.
func awaitLoss(t *testing.T, ctx context.Context) {
	t.Helper()
	awaitEnd(t, ctx, distsync.ErrLeaseLost)
}

// awaitEnd waits, at most a minute, for the holder's context to end with
// a cause wrapping cause.
func awaitEnd(t *testing.T, ctx context.Context, cause error) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(time.Minute):
		t.Fatal("the holder's context outlived a minute of fault")
	}
	require.ErrorIs(t, context.Cause(ctx), cause)
}

// takeWhenFree takes the lock on the other side as soon as the server lets
// it go: it watches the lock until it is gone (the lease ran out) and then
// tries once, rather than trusting the acquire loop's wake-up timer, which
// can oversleep (see clientAt).
func (sc *scene) takeWhenFree(t *testing.T, who string) (context.Context, *hold) {
	t.Helper()
	require.Eventually(t, func() bool {
		locked, err := sc.mb.IsLocked(context.Background())
		return err == nil && !locked
	}, time.Minute, time.Millisecond, "the lease did not run out on the server")
	return sc.take(t, who)
}

// ---- a holder killed with kill -9 ----

const helperEnv = "DISTSYNC_FAULT_HOLDER"

// TestHelperHolder is the holder process of TestFaultHolderKilled, not a test:
// with DISTSYNC_FAULT_HOLDER="addr name lease" it locks the mutex name on addr
// with that watchdog lease, prints "token N" and holds until its stdin closes
// or it is killed.
func TestHelperHolder(t *testing.T) {
	spec := strings.Fields(os.Getenv(helperEnv))
	if len(spec) != 3 {
		t.Skip("the holder process of TestFaultHolderKilled; runs only when it starts it")
	}
	lease, err := time.ParseDuration(spec[2])
	require.NoError(t, err)
	c := clientAt(t, spec[0], lease)
	m := mutexOf(t, c, spec[1])
	ctx, err := m.Lock(context.Background())
	require.NoError(t, err)
	tok, err := m.Token(ctx)
	require.NoError(t, err)
	fmt.Printf("token %d\n", tok)
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// A holder process killed with kill -9 holds the lock until its lease runs
// out on the server, and no longer: another client is granted the lock
// exactly after the remaining TTL observed at the kill.
func TestFaultHolderKilled(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	redistest.RequireReal(t, s)
	const lease = time.Second
	name := "killed"

	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHolder$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %s %s", helperEnv, s.Addr(), name, lease))
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		stdin.Close()
		<-exited
	})
	tokens := make(chan int64, 1)
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "token "); ok {
				tok, _ := strconv.ParseInt(v, 10, 64)
				tokens <- tok
			}
		}
		_ = cmd.Wait()
	}()
	var tok int64
	select {
	case tok = <-tokens:
	case <-exited:
		t.Fatalf("holder process exited: %s", stderr.String())
	case <-time.After(time.Minute):
		t.Fatal("holder process did not lock within a minute")
	}
	h := newHistory(name)
	proc := h.acquired("process", tok)

	c := clientAt(t, s.Addr(), lease)
	m := mutexOf(t, c, name)
	ctx := context.Background()
	_, err = m.TryLock(ctx, 0, 0)
	require.ErrorIs(t, err, distsync.ErrNotAcquired, "the holder process holds it")
	awaitRenewals(t, m, 1) // the holder's watchdog renews from its own process

	require.NoError(t, cmd.Process.Kill())
	<-exited
	proc.killed()
	sent := time.Now()
	ttl, err := m.TTL(ctx)
	require.NoError(t, err)
	require.Positive(t, ttl, "the lock outlives its killed holder")

	held, err := m.TryLock(ctx, time.Minute, 0)
	require.NoError(t, err)
	got := time.Now()
	tok2, err := m.Token(held)
	require.NoError(t, err)
	require.NoError(t, h.acquired("survivor", tok2).release(held, unlock(m)))

	// The server expires the key when its clock passes the expiry that PTTL
	// counted from, which it read after sent.
	assert.False(t, got.Before(sent.Add(ttl)), "granted %v after the kill, before the %v the lease had left", got.Sub(sent), ttl)
	assert.Less(t, got.Sub(sent), ttl+10*time.Second, "free within the lease it had left (generous bound)")
	t.Logf("lease left at the kill %v, granted after %v", ttl, got.Sub(sent))
	requireExclusive(t, h)
}

// helperWaiterEnv starts TestHelperWaiter: "<addrs> <name> <kind>", the
// addresses joined by ',' and kind a dstest.Kinds name.
const helperWaiterEnv = "DISTSYNC_FAULT_WAITER"

// TestHelperWaiter is the waiting process of waiterProcess: it waits for
// the lock name of its kind on the server (or Cluster) at addrs, which the
// test holds, until it is killed.
func TestHelperWaiter(t *testing.T) {
	spec := strings.Fields(os.Getenv(helperWaiterEnv))
	if len(spec) != 3 {
		t.Skip("the waiting process of TestFaultWaiterKilled; runs only when it starts it")
	}
	c := clientAt(t, spec[0], 30*time.Second, func(o *distsync.Options) { o.Addrs = strings.Split(spec[0], ",") })
	for _, k := range dstest.Kinds {
		if k.Name == spec[2] {
			l, err := k.New(c, spec[1])
			require.NoError(t, err)
			_, _ = l.TryLock(context.Background(), distsync.Forever, 10*time.Minute)
		}
	}
}

// waiterProcess starts TestHelperWaiter in a process of its own, waiting
// for the lock name of kind on addrs, and returns once it waits (the lock's
// only waiter in c.Inspect), with kill, which ends it with SIGKILL (as at
// cleanup) and waits until the server has closed its subscription on
// channel(<its Client id>) (listeners counts them).
func waiterProcess(t *testing.T, c *distsync.Client, addrs []string, name, kind string, listeners func(ch string) int64, channel func(cid string) string) (kill func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWaiter$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %s %s", helperWaiterEnv, strings.Join(addrs, ","), name, kind))
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	ctx := context.Background()
	var ws []distsync.Waiter
	require.Eventually(t, func() bool {
		info, err := c.Inspect(ctx, name)
		ws = info.Waiters
		return err == nil && len(ws) == 1
	}, 20*time.Second, time.Millisecond, "the waiting process does not wait (its output: %s)", &out)
	cid, _, _ := strings.Cut(ws[0].ID, ":") // every waiter id starts with its Client's
	require.Equal(t, int64(1), listeners(channel(cid)), "the waiting process listens")
	return func() {
		t.Helper()
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		<-exited
		require.Eventually(t, func() bool { return listeners(channel(cid)) == 0 }, 20*time.Second, time.Millisecond,
			"the server closes the killed process's subscription")
	}
}

// A waiter process killed with kill -9 while it waits for a lock is passed
// over by the release that would have granted it the lock: its kernel closed
// its connections, so the server knows its Client listens no more, and the
// release hands the lock to the next waiter, in this process, at once; for
// every exclusive kind. Before, the dead process was granted the lock for
// the hand-off lease, and the next waiter took it by an attempt of its own
// once that lapsed. Not parallel: it reads the process-wide count of grants
// taken from a notification.
func TestFaultWaiterKilled(t *testing.T) {
	s := redistest.Start(t)
	redistest.RequireReal(t, s)
	const lease = 30 * time.Second
	a, b := clientAt(t, s.Addr(), lease), clientAt(t, s.Addr(), lease)
	for _, k := range dstest.Kinds {
		t.Run(k.Name, func(t *testing.T) {
			killedWaiterPassedOver(t, a, b, []string{s.Addr()}, k, func(ch string) int64 { return dstest.Listeners(t, a, ch) })
		})
	}
}

// killedWaiterPassedOver has a lock of kind held by Client a, a waiter of
// it in a process of its own (waiterProcess, on addrs) and one of Client b
// behind it; it kills the process, releases, and checks that the release
// handed the lock to b's waiter. listeners counts the subscribers of a
// channel (classic or sharded pub/sub).
func killedWaiterPassedOver(t *testing.T, a, b *distsync.Client, addrs []string, k dstest.Kind, listeners func(ch string) int64) {
	t.Helper()
	ctx := context.Background()
	name := "killed-waiter-" + k.Name
	la, err := k.New(a, name)
	require.NoError(t, err)
	lb, err := k.New(b, name)
	require.NoError(t, err)
	held, err := la.TryLock(ctx, 0, 10*time.Minute)
	require.NoError(t, err)
	info, err := a.Inspect(ctx, name)
	require.NoError(t, err)
	kill := waiterProcess(t, a, addrs, name, k.Name, listeners, func(cid string) string { return info.Key + ":ch:" + cid })
	got := make(chan context.Context, 1)
	go func() {
		w, err := lb.TryLock(ctx, 5*time.Minute, 0)
		assert.NoError(t, err)
		got <- w
	}()
	waitInspected(t, a, name, 2)
	kill()
	waitInspected(t, a, name, 2) // the killed process's waiter is still registered

	handed := acquire.Counters().Handed.Load()
	require.NoError(t, la.Unlock(held))
	var w context.Context
	select {
	case w = <-got:
	case <-time.After(time.Minute):
		t.Fatal("the live waiter does not hold")
	}
	assert.Equal(t, handed+1, acquire.Counters().Handed.Load(), "the release handed the lock to the live waiter")
	require.NoError(t, lb.Unlock(w))
	waitInspected(t, a, name, 0)
}

// ---- the server paused with SIGSTOP ----

func TestFaultRedisPaused(t *testing.T) {
	t.Parallel()
	// Shorter than the lease: the server answers late but nothing expired in
	// between (server time keeps running while it is stopped, so what
	// matters is that the pause ends before the lease the last renewal set).
	t.Run("shorter than the lease", func(t *testing.T) {
		t.Parallel()
		s := redistest.Start(t)
		redistest.RequireProcess(t, s)
		sc := newScene(t, "paused short", s.Addr(), s.Addr(), 2*time.Second)
		sc.outlastShortFault(t, s.Pause, s.Resume)
	})

	// Longer than the lease: the holder's context is cancelled while the
	// server is stopped, so before any other owner can be granted. The
	// margin: the watchdog's deadline for a lease is the send time of the
	// request that last extended it plus the lease, and the server counts
	// the same lease from when it received that request, later; so the
	// holder gives up before the server's expiry, and here before the server
	// answers anyone at all. (A pause that ends less than Lease/3 after that
	// deadline is not covered today: the holder notices the deadline only
	// when its blocked renewal times out; see the network cut below.)
	t.Run("longer than the lease", func(t *testing.T) {
		t.Parallel()
		s := redistest.Start(t)
		redistest.RequireProcess(t, s)
		sc := newScene(t, "paused long", s.Addr(), s.Addr(), time.Second)
		ctx, w := sc.hold(t, 0)

		pausedAt := time.Now()
		s.Pause()
		got := waiter(sc.h, "waiter", sc.mb, time.Minute)
		awaitLoss(t, ctx) // a paused server is resumed by its cleanup
		lostAfter := time.Since(pausedAt)
		s.Resume()
		require.NoError(t, receive(t, got, "waiter"))
		require.False(t, w.finish())
		t.Logf("holder saw the loss %v into the pause", lostAfter)
		requireExclusive(t, sc.h)
	})
}

// ---- the server restarted ----

// With appendonly yes and appendfsync always, a crash (kill -9) and restart
// loses no grant: the restored lock keeps its owner and its expiry, the
// holder's watchdog renews it after reconnecting, and nobody else is granted
// it meanwhile.
func TestFaultRestartAOFAlways(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t, redistest.WithConfig("appendonly", "yes"), redistest.WithConfig("appendfsync", "always"))
	redistest.RequireProcess(t, s)
	sc := newScene(t, "aof always", s.Addr(), s.Addr(), 2*time.Second)
	ctx, w := sc.hold(t, 0)

	s.Kill()
	s.Restart(t)
	_, err := tryLock(sc.mb, 0, 0)
	require.ErrorIs(t, err, distsync.ErrNotAcquired, "the lock survived the crash")
	ttl, err := sc.mb.TTL(context.Background())
	require.NoError(t, err)
	require.Positive(t, ttl, "with its expiry")
	got := waiter(sc.h, "waiter", sc.mb, time.Minute)
	awaitRenewals(t, sc.mb, 2) // the watchdog goes on after the restart
	require.Zero(t, sc.a.Stats().LostLeases)
	require.True(t, w.hd.alive(ctx), "the holder keeps renewing after the restart")
	n, err := sc.ma.HoldCount(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	w.release(t)
	require.NoError(t, receive(t, got, "waiter"))
	requireExclusive(t, sc.h)
}

// Without persistence a restart forgets every lock: a second owner is granted
// while the first still holds, as the checker shows. The fencing tokens still
// increase (they continue from the server clock when the counter is gone),
// which is what lets a resource refuse the stale holder. Delaying the restart
// by one lease removes the overlap: every lease granted before the stop has
// ended, and every holder has seen it, before anyone can be granted again.
func TestFaultRestartWithoutPersistence(t *testing.T) {
	t.Parallel()
	t.Run("immediate restart grants twice", func(t *testing.T) {
		t.Parallel()
		s := redistest.Start(t)
		redistest.RequireProcess(t, s)
		sc := newScene(t, "restart without persistence", s.Addr(), s.Addr(), time.Second)
		// An explicit lease, so that nothing renews it and the holder's
		// context lives for the whole lease: the overlap does not hinge on
		// when a renewal would find the key gone. With the watchdog it is as
		// real but lasts only until the next renewal (at most Lease/3).
		_, w := sc.hold(t, 5*time.Second)

		s.Restart(t)
		bctx, second := sc.take(t, "second") // the restarted server forgot the lock
		require.True(t, w.finish(), "the first holder still holds by its lease")
		require.NoError(t, second.release(bctx, unlock(sc.mb)))
		requireDoubleGrant(t, sc.h)
	})

	t.Run("restart delayed by one lease", func(t *testing.T) {
		t.Parallel()
		s := redistest.Start(t)
		redistest.RequireProcess(t, s)
		const lease = time.Second
		sc := newScene(t, "restart delayed by one lease", s.Addr(), s.Addr(), lease)
		ctx, w := sc.hold(t, 0)

		s.Stop()
		time.Sleep(lease) // the operator's delay: no lease outlives it
		s.Restart(t)
		bctx, second := sc.take(t, "second")
		require.NoError(t, second.release(bctx, unlock(sc.mb)))
		require.False(t, w.finish(), "the first holder saw its lease end")
		require.ErrorIs(t, context.Cause(ctx), distsync.ErrLeaseLost)
		requireExclusive(t, sc.h)
	})
}

// ---- replica failover ----

// replicated is a master and a replica that replicates through a cutProxy,
// so that the test can stop replication exactly: stopping the replica's
// process (SIGSTOP) does not, since the kernel still receives the
// replication stream into the paused replica's socket, and the replica reads
// it on resuming, before it could be promoted.
type replicated struct {
	master, replica *redistest.Server
	link            *cutProxy
}

func startReplicated(t *testing.T) replicated {
	t.Helper()
	master := redistest.Start(t)
	redistest.RequireProcess(t, master)
	link := startCutProxy(t, master.Addr())
	return replicated{master: master, replica: startReplicaOf(t, master, link.Port()), link: link}
}

// failover kills the master, drops what replication had not delivered and
// promotes the replica, as a failover after a master crash does.
func (r replicated) failover(t *testing.T) {
	t.Helper()
	r.master.Kill()
	r.link.sever()
	rc := r.replica.Client(t)
	require.NoError(t, rc.Do(context.Background(), rc.B().Replicaof().No().One().Build()).Error())
}

// One master, one replica, asynchronous replication: a grant the replica has
// not received is lost when the replica is promoted, and the lock is granted
// again. Replication is cut while the grant happens, so the loss is certain
// rather than a race with replication.
func TestFaultReplicaFailover(t *testing.T) {
	t.Parallel()
	const lease = 2 * time.Second
	ack := func(o *distsync.Options) {
		o.ReplicaAck = distsync.ReplicaAck{Replicas: 1, Timeout: time.Second}
	}

	t.Run("without acknowledgement grants twice", func(t *testing.T) {
		t.Parallel()
		r := startReplicated(t)
		sc := newScene(t, "failover without acknowledgement", r.master.Addr(), r.replica.Addr(), lease)

		r.link.cut()
		_, w := sc.hold(t, 0)
		r.failover(t)
		bctx, second := sc.take(t, "second") // the new master never saw the first grant
		require.True(t, w.finish(), "the first holder's lease has not run out")
		require.NoError(t, second.release(bctx, unlock(sc.mb)))
		requireDoubleGrant(t, sc.h)
	})

	t.Run("with acknowledgement refuses the unreplicated grant", func(t *testing.T) {
		t.Parallel()
		r := startReplicated(t)
		sc := newScene(t, "failover with acknowledgement", r.master.Addr(), r.replica.Addr(), lease, ack)

		r.link.cut()
		_, err := sc.ma.TryLock(context.Background(), 0, 0)
		require.ErrorIs(t, err, distsync.ErrNotReplicated, "no grant without the replica")
		r.failover(t)
		bctx, second := sc.take(t, "second")
		require.NoError(t, second.release(bctx, unlock(sc.mb)))
		requireExclusive(t, sc.h)
	})

	// Replica acknowledgement covers the watchdog's renewals too: a renewal
	// the replica did not acknowledge does not extend the holder's deadline,
	// so the holder's context ends before the lease the promoted replica
	// knows (the acknowledged acquisition's) runs out there, and the second
	// owner is granted only after that.
	t.Run("with acknowledgement, unacknowledged renewals do not extend the hold", func(t *testing.T) {
		t.Parallel()
		r := startReplicated(t)
		sc := newScene(t, "failover after unacknowledged renewals", r.master.Addr(), r.replica.Addr(), lease, ack)

		ctx, w := sc.hold(t, 0) // acknowledged by the replica
		r.link.cut()
		awaitRenewals(t, sc.ma, 1) // on the master only
		require.True(t, w.hd.alive(ctx))
		r.failover(t)
		bctx, second := sc.takeWhenFree(t, "second")
		w.finish() // the first holder's context ended at its acknowledged deadline
		require.NoError(t, second.release(bctx, unlock(sc.mb)))
		requireExclusive(t, sc.h)
	})
}

// ---- the network cut between a holder and the server ----

func TestFaultNetworkCut(t *testing.T) {
	t.Parallel()
	// Shorter than the lease: the renewal that the cut held back arrives
	// when it heals, before the lease it extends has ended.
	t.Run("shorter than the lease", func(t *testing.T) {
		t.Parallel()
		s := redistest.Start(t)
		redistest.RequireReal(t, s)
		p := startCutProxy(t, s.Addr())
		sc := newScene(t, "network cut short", p.Addr(), s.Addr(), 2*time.Second)
		sc.outlastShortFault(t, p.cut, p.heal)
	})

	// Longer than the lease: the holder's context is cancelled before the
	// other side of the cut is granted. The watchdog bounds every renewal
	// attempt by the earliest deadline in its batch (the send time of the
	// last extension + lease - drift, drift = lease/100 + 2 ms), so the loss
	// is reported at that deadline even while the attempt is stuck in the
	// cut, and the server's expiry comes no earlier than that send time +
	// lease.
	t.Run("longer than the lease", func(t *testing.T) {
		t.Parallel()
		s := redistest.Start(t)
		redistest.RequireReal(t, s)
		p := startCutProxy(t, s.Addr())
		sc := newScene(t, "network cut long", p.Addr(), s.Addr(), time.Second)
		ctx, w := sc.hold(t, 0)

		p.cut()
		bctx, second := sc.takeWhenFree(t, "other side")
		awaitLoss(t, ctx)
		require.False(t, w.finish())
		require.NoError(t, second.release(bctx, unlock(sc.mb)))
		p.heal()
		requireExclusive(t, sc.h)
	})
}

// releasePassingOver runs release, the release of name by script on c,
// whose only waiters are a dead one and a live one behind it, with fault
// injected once into the script's call (the case called what): it reports
// the release once, and once the server applied it (for a lost request:
// once the release returns, well within the hand-off lease a grant to the
// dead waiter would keep) nobody waits any more, so the release itself
// passed over the dead waiter and granted the live one.
func releasePassingOver(t *testing.T, c *distsync.Client, f *dstest.Faulty, name, script, what string, fault dstest.Fault, release func() error) {
	t.Helper()
	nobodyWaits := func() {
		info, err := c.Inspect(context.Background(), name)
		assert.NoError(t, err)
		assert.Empty(t, info.Waiters, "%s: applied, the release passed over the dead waiter and granted the live one", what)
	}
	rule := &dstest.Rule{Match: dstest.Script(script), Fault: fault, Delay: 300 * time.Millisecond, Times: 1}
	if fault != dstest.LoseRequest {
		rule.Then = nobodyWaits
	}
	f.Inject(rule)
	require.NoError(t, release(), "%s: the release is reported once", what)
	require.Equal(t, 1, rule.Hits())
	f.Clear()
	if fault == dstest.LoseRequest {
		nobodyWaits()
	}
}

// bury crashes the Clients dead, whose ghosts waiters on name (their
// results arrive on gone) are registered with live waiters of live Clients
// (one behind them, or more). Then either
// the server has closed dead's subscriptions, and the dead waiters are
// still registered; or, with ended, a stand-in listens in the place of each
// of dead (dstest.StandIn: the server cannot tell) and the dead waiters'
// registrations, whose ends the kind keeps at its key and the suffix ends,
// have ended (dstest.EndRegistrations): only the live waiters' live.
func bury(t *testing.T, c *distsync.Client, dead []*distsync.Client, name string, gone <-chan error, ghosts, live int, ends string, ended bool) {
	t.Helper()
	info, err := c.Inspect(context.Background(), name)
	require.NoError(t, err)
	var ids []string
	for _, w := range info.Waiters {
		for _, d := range dead {
			if strings.HasPrefix(w.ID, d.ID()+":") {
				ids = append(ids, w.ID)
			}
		}
	}
	require.Len(t, ids, ghosts)
	for _, d := range dead {
		dstest.Crash(d)
	}
	for range ghosts {
		require.ErrorIs(t, <-gone, distsync.ErrClosed)
	}
	listens := ":ch:" // where each Client's waiters listen, after the key
	if info.Kind == distsync.KindElection {
		listens = ":wake:" // beside the wake-up channel (election/queue.lua)
	}
	for _, d := range dead {
		channel := info.Key + listens + d.ID()
		if ended {
			dstest.StandIn(t, c, channel)
		} else {
			dstest.WaitUnsubscribed(t, c, channel)
		}
	}
	if ended {
		dstest.EndRegistrations(t, c, info.Key+ends, ids)
		waitInspected(t, c, name, live)
		return
	}
	waitInspected(t, c, name, ghosts+live)
}

// deadCases are the dead waiters ahead of a live one that the pass-over
// fault tests release over, under each fault: one dead waiter; two whose
// registrations ended while their Client seems to listen (from the
// second, a release drops them all at once); three of three dead Clients
// (from the second dead Client, a release asks about every Client of the
// queue at once and forgets the waiters of all that no longer listen);
// twenty of one dead Client (more than a fair lock's queue removes one
// by one: it is written anew, dsq_remove).
func deadCases() []deadCase {
	var out []deadCase
	for _, f := range []struct {
		name  string
		fault dstest.Fault
	}{{"lost request", dstest.LoseRequest}, {"lost reply", dstest.LoseReply}, {"late reply", dstest.LateReply}} {
		out = append(out,
			deadCase{f.name, f.fault, 1, 1, false},
			deadCase{f.name + ", ended", f.fault, 2, 1, true},
			deadCase{f.name + ", 3 dead Clients", f.fault, 3, 3, false},
			deadCase{f.name + ", 20 of a dead Client", f.fault, 20, 1, false})
	}
	return out
}

type deadCase struct {
	name           string
	fault          dstest.Fault
	ghosts, deadCs int  // dead waiters, and their Clients (waiter i in Client i % deadCs)
	ended          bool // their registrations ended, their Clients seeming to listen
}

// queueDead starts fc.ghosts waiters on name, waiter i on the i % fc.deadCs
// th of fc.deadCs new Clients on s, each by wait (which returns when the
// wait ends), and waits until each is registered, in this order, behind
// the ahead registered before (c inspects). It returns the Clients, for
// bury, and where their waits' errors arrive.
func queueDead(t *testing.T, s *redistest.Server, c *distsync.Client, name string, fc deadCase, ahead int, wait func(*distsync.Client) error) ([]*distsync.Client, <-chan error) {
	t.Helper()
	dead := make([]*distsync.Client, fc.deadCs)
	for i := range dead {
		dead[i] = dstest.ClientOn(t, s)
	}
	gone := make(chan error, fc.ghosts)
	for i := range fc.ghosts {
		go func() { gone <- wait(dead[i%len(dead)]) }()
		waitInspected(t, c, name, ahead+i+1)
	}
	return dead, gone
}

// eachDeadCase runs body for each of deadCases, in parallel subtests
// named for the case, each with a Client c whose commands go through the
// fault layer f, on the shared server s, and a name of its own.
func eachDeadCase(t *testing.T, body func(t *testing.T, s *redistest.Server, fc deadCase, c *distsync.Client, f *dstest.Faulty, name string)) {
	s := redistest.Shared(t)
	for _, fc := range deadCases() {
		t.Run(fc.name, func(t *testing.T) {
			t.Parallel()
			c, f := faultyClient(t, s, 0)
			body(t, s, fc, c, f, dstest.Name(t))
		})
	}
}

// A release that passes over a dead waiter and hands the lock to the live
// one behind it does both in one script: when its request is lost, its
// reply is lost after the server applied it, or its reply comes late, the
// release is sent again or waited for, Unlock reports it once, and the live
// waiter is handed the lock once, by that release (the Then of the rule
// finds nobody waiting once the server applied it). Every exclusive kind,
// and each of deadCases: one dead waiter, two whose registrations ended,
// three of three dead Clients, twenty of one.
func TestPassOverUnderReleaseFaults(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	var exclusive []lockKind
	for _, k := range lockKinds {
		if k.name != "rwlock-read" { // readers share: the one behind is granted with the dead one
			exclusive = append(exclusive, k)
		}
	}
	// Where each kind keeps the end of a waiter's registration.
	endsAt := map[string]string{"mutex": ":waiting", "fairlock": ":deadlines", "rwlock-write": ":wwaiters"}
	eachKind(t, exclusive, func(t *testing.T, k lockKind, c *distsync.Client, f *dstest.Faulty, l, other lockish) {
		ctx := context.Background()
		name := dstest.Name(t) // l's and other's
		for _, fc := range deadCases() {
			fault, ghosts := fc.fault, fc.ghosts
			held, err := l.TryLock(ctx, 0, 10*time.Minute)
			require.NoError(t, err)
			dead, gone := queueDead(t, s, c, name, fc, 0, func(d *distsync.Client) error {
				_, err := k.make(t, d, name).TryLock(ctx, distsync.Forever, 10*time.Minute)
				return err
			})
			got := make(chan context.Context, 1)
			go func() {
				w, err := other.TryLock(ctx, time.Minute, 0)
				assert.NoError(t, err)
				got <- w
			}()
			waitInspected(t, c, name, ghosts+1)
			bury(t, c, dead, name, gone, ghosts, 1, endsAt[k.name], fc.ended)

			releasePassingOver(t, c, f, name, k.release, fc.name, fault, func() error { return l.Unlock(held) })
			var w context.Context
			select {
			case w = <-got:
			case <-time.After(20 * time.Second):
				t.Fatalf("%s: the live waiter does not hold", fc.name)
			}
			n, err := other.HoldCount(w)
			require.NoError(t, err)
			assert.Equal(t, 1, n, "%s: the live waiter holds", fc.name)
			waitInspected(t, c, name, 0)
			require.NoError(t, other.Unlock(w))
			locked, err := l.IsLocked(ctx)
			require.NoError(t, err)
			assert.False(t, locked, "%s: nothing else holds", fc.name)
		}
	})
}

// The permit semaphore's release that passes over a dead waiter and gives
// the permit to the live one behind it, under a lost request, a lost reply
// and a late reply, as TestPassOverUnderReleaseFaults for the locks: its
// fast path finds the head's Client gone and leaves the release to the
// full path, which passes over and grants, once.
func TestPermitPassOverUnderReleaseFaults(t *testing.T) {
	t.Parallel()
	const release = "Return a permit to the pool"
	eachDeadCase(t, func(t *testing.T, s *redistest.Server, fc deadCase, c *distsync.Client, f *dstest.Faulty, name string) {
		ctx := context.Background()
		ps := permitSem(t, c, name, 1)
		p, err := ps.TryAcquire(ctx, 0, 10*time.Minute)
		require.NoError(t, err)
		ghosts := fc.ghosts
		dead, gone := queueDead(t, s, c, name, fc, 0, func(d *distsync.Client) error {
			ds, err := d.PermitSemaphore(name)
			if err == nil {
				_, err = ds.TryAcquire(ctx, distsync.Forever, 10*time.Minute)
			}
			return err
		})
		ls, err := dstest.ClientOn(t, s).PermitSemaphore(name)
		require.NoError(t, err)
		got := make(chan *semaphore.Permit, 1)
		go func() {
			q, err := ls.TryAcquire(ctx, time.Minute, 0)
			assert.NoError(t, err)
			got <- q
		}()
		waitInspected(t, c, name, ghosts+1)
		bury(t, c, dead, name, gone, ghosts, 1, ":pneeds", fc.ended)

		releasePassingOver(t, c, f, name, release, fc.name, fc.fault, func() error { return ps.Release(ctx, p) })
		var q *semaphore.Permit
		select {
		case q = <-got:
		case <-time.After(20 * time.Second):
			t.Fatal("the live waiter has no permit")
		}
		require.NotNil(t, q)
		require.NoError(t, q.Context().Err(), "the live waiter holds its permit")
		waitInspected(t, c, name, 0)
		require.NoError(t, ls.Release(ctx, q))
		avail, err := ps.Available(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(1), avail, "nothing else holds a permit")
	})
}

// The waiter at the head of a fair lock nobody holds, or the candidate at
// the head of an election nobody leads (the holder's key vanished, and
// nobody handed on), gives up: its leave hands on as a release would,
// passing over the dead waiters behind it to the live one (fl_handon,
// el_handon), in one script. Under a lost request, a lost reply and a late
// reply (each of deadCases), the leave is sent again or waited for, the
// wait returns its context's end, and the live waiter is granted once, by
// that leave (the Then of the rule finds nobody waiting once the server
// applied it).
func TestLeavePassesOverUnderFaults(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	for _, kind := range []string{"fairlock", "election"} {
		for _, fc := range deadCases() {
			t.Run(kind+"/"+fc.name, func(t *testing.T) {
				t.Parallel()
				leavePassingOver(t, s, kind, fc)
			})
		}
	}
}

// waited is the outcome of a wait of leavePassingOver.
type waited struct {
	ctx  context.Context
	term int64 // a campaign's
	err  error
}

func leavePassingOver(t *testing.T, s *redistest.Server, kind string, fc deadCase) {
	ctx := context.Background()
	c, f := faultyClient(t, s, 0)
	name := dstest.Name(t)
	// wait starts a waiter of kind on client, waiting until ctx ends, with
	// an explicit lease of 10 minutes (the fair lock's), or campaigning
	// with value (the election's).
	wait := func(client *distsync.Client, ctx context.Context, value string) <-chan waited {
		ch := make(chan waited, 1)
		go func() {
			var w waited
			if kind == "election" {
				w.ctx, w.term, w.err = electionOf(t, client, name).Campaign(ctx, value)
			} else {
				fl, err := client.FairLock(name)
				require.NoError(t, err)
				w.ctx, w.err = fl.TryLock(ctx, distsync.Forever, 10*time.Minute)
			}
			ch <- w
		}()
		return ch
	}
	leave, ends := "A waiter gives up (its context ended or its wait budget was spent): remove", ":deadlines"
	if kind == "election" {
		leave, ends = "A candidate gives up", ":wins"
	}

	held := <-wait(dstest.ClientOn(t, s), ctx, "holder")
	require.NoError(t, held.err)
	hctx, giveUp := context.WithCancel(ctx)
	defer giveUp()
	head := wait(c, hctx, "head")
	waitInspected(t, c, name, 1)
	dead, gone := queueDead(t, s, c, name, fc, 1, func(d *distsync.Client) error { return (<-wait(d, ctx, "ghost")).err })
	lc := dstest.ClientOn(t, s)
	live := wait(lc, ctx, "live")
	waitInspected(t, c, name, fc.ghosts+2)
	bury(t, c, dead, name, gone, fc.ghosts, 2, ends, fc.ended)
	info, err := c.Inspect(ctx, name)
	require.NoError(t, err)
	rc := dstest.ClientOn(t, s).Rueidis()
	require.NoError(t, rc.Do(ctx, rc.B().Del().Key(info.Key).Build()).Error(), "the holder's key vanishes")

	nobodyWaits := func() {
		info, err := c.Inspect(context.Background(), name)
		assert.NoError(t, err)
		assert.Empty(t, info.Waiters, "%s: applied, the leave passed over the dead waiters and granted the live one", fc.name)
	}
	rule := &dstest.Rule{Match: dstest.Script(leave), Fault: fc.fault, Delay: 300 * time.Millisecond, Times: 1}
	if fc.fault != dstest.LoseRequest {
		rule.Then = nobodyWaits
	}
	f.Inject(rule)
	giveUp()
	require.ErrorIs(t, (<-head).err, context.Canceled, "%s: the head gave up", fc.name)
	require.Equal(t, 1, rule.Hits())
	f.Clear()
	nobodyWaits()

	var w waited
	select {
	case w = <-live:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: the live waiter is not granted", fc.name)
	}
	require.NoError(t, w.err)
	require.NoError(t, context.Cause(w.ctx), "%s: the live waiter holds", fc.name)
	if kind == "election" {
		st, err := electionOf(t, c, name).Leader(ctx)
		require.NoError(t, err)
		assert.Equal(t, "live", st.Value)
		assert.Equal(t, w.term, st.Term, "%s: led once, by the leave", fc.name)
		return
	}
	fl, err := lc.FairLock(name)
	require.NoError(t, err)
	n, err := fl.HoldCount(w.ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "%s: the live waiter holds once", fc.name)
}

// A fair lock's attempt that finds the lock lapsed (its holder's key
// vanished, nobody handed on) with dead waiters at the head of the queue
// passes over them (dsq_head) and takes the lock, in one script: under a
// lost request, a lost reply and a late reply (each of deadCases), the
// attempt is sent again or waited for, and the live waiter holds once,
// by it (the Then of the rule finds nobody waiting once the server applied
// it). A wake-up by hand makes it try once the lock lapsed.
func TestFairLockLapsePassOverUnderFaults(t *testing.T) {
	t.Parallel()
	eachDeadCase(t, func(t *testing.T, s *redistest.Server, fc deadCase, c *distsync.Client, f *dstest.Faulty, name string) {
		ctx := context.Background()
		holder, err := dstest.ClientOn(t, s).FairLock(name)
		require.NoError(t, err)
		_, err = holder.TryLock(ctx, 0, 10*time.Minute)
		require.NoError(t, err)
		dead, gone := queueDead(t, s, c, name, fc, 0, func(d *distsync.Client) error {
			fl, err := d.FairLock(name)
			if err == nil {
				_, err = fl.TryLock(ctx, distsync.Forever, 10*time.Minute)
			}
			return err
		})
		fl, err := c.FairLock(name)
		require.NoError(t, err)
		got := make(chan context.Context, 1)
		go func() {
			w, err := fl.TryLock(ctx, time.Minute, 0)
			assert.NoError(t, err)
			got <- w
		}()
		waitInspected(t, c, name, fc.ghosts+1)
		bury(t, c, dead, name, gone, fc.ghosts, 1, ":deadlines", fc.ended)
		info, err := c.Inspect(ctx, name)
		require.NoError(t, err)
		live := info.Waiters[len(info.Waiters)-1].ID
		require.True(t, strings.HasPrefix(live, c.ID()+":"), "the live waiter is last")

		nobodyWaits := func() {
			info, err := c.Inspect(context.Background(), name)
			assert.NoError(t, err)
			assert.Empty(t, info.Waiters, "%s: applied, the attempt passed over the dead waiters and took the lock", fc.name)
		}
		rule := &dstest.Rule{Match: dstest.Script("A fair lock is the mutex's hash H"), Fault: fc.fault, Delay: 300 * time.Millisecond, Times: 1}
		if fc.fault != dstest.LoseRequest {
			rule.Then = nobodyWaits
		}
		f.Inject(rule)
		rc := dstest.ClientOn(t, s).Rueidis()
		require.NoError(t, rc.Do(ctx, rc.B().Del().Key(info.Key).Build()).Error(), "the lock lapses")
		require.NoError(t, rc.Do(ctx, rc.B().Publish().Channel(info.Key+":ch:"+c.ID()).Message("w:"+live+" -").Build()).Error())
		var w context.Context
		select {
		case w = <-got:
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: the live waiter does not hold", fc.name)
		}
		require.Equal(t, 1, rule.Hits())
		f.Clear()
		nobodyWaits()
		n, err := fl.HoldCount(w)
		require.NoError(t, err)
		assert.Equal(t, 1, n, "%s: the live waiter holds once", fc.name)
		require.NoError(t, fl.Unlock(w))
	})
}
