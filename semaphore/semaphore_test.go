package semaphore_test

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/acquire"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
	"github.com/distsync/distsync/semaphore"
)

func TestMain(m *testing.M) {
	options = dstest.ExampleOptions(0)
	redistest.Main(m)
}

// uniqueName is a name no other test or run uses, so that -count=N works.
func uniqueName(t testing.TB) string {
	return dstest.Name(t) + "-" + strconv.FormatInt(nameSeq.Add(1), 10) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
}

var nameSeq atomic.Int64

func newSem(t testing.TB, c *distsync.Client, name string) *semaphore.Semaphore {
	t.Helper()
	s, err := c.Semaphore(name)
	require.NoError(t, err)
	return s
}

func newPermitSem(t testing.TB, c *distsync.Client, name string) *semaphore.PermitSemaphore {
	t.Helper()
	s, err := c.PermitSemaphore(name)
	require.NoError(t, err)
	return s
}

// waitForWaiters waits until the waiter set of the semaphore whose key is key
// has n members.
func waitForWaiters(t *testing.T, c *distsync.Client, key string, n int64) {
	t.Helper()
	dstest.WaitWaiters(t, c, key+":waiters", n)
}

func available(t *testing.T, s interface {
	Available(context.Context) (int64, error)
}) int64 {
	t.Helper()
	n, err := s.Available(context.Background())
	require.NoError(t, err)
	return n
}

// gauge counts holders and remembers the most seen at once.
type gauge struct{ now, most atomic.Int64 }

func (g *gauge) enter() {
	n := g.now.Add(1)
	for m := g.most.Load(); n > m && !g.most.CompareAndSwap(m, n); m = g.most.Load() {
	}
	time.Sleep(time.Millisecond) // hold a while, so that others wait
}

func (g *gauge) leave() { g.now.Add(-1) }

func TestNeverMoreHoldersThanPermits(t *testing.T) {
	t.Parallel()
	const goroutines, permits, rounds = 64, 8, 3
	// A waiter window of an hour: a lost wake-up would hang the test rather
	// than be hidden by the fallback sleep.
	long := func(o *distsync.Options) { o.WaiterWindow = time.Hour }
	clients := []*distsync.Client{dstest.Client(t, long), dstest.Client(t, long)}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)

	// contend runs the goroutines over both clients; hold(i) acquires for
	// goroutine i and returns the release. Meanwhile it reads the server's
	// count over and over: check returns what is wrong with one reading
	// ("" when nothing), so that no permit is made or lost on the way, not
	// only at the end.
	contend := func(t *testing.T, hold func(i int) (release func() error, err error), check func() string) {
		var g gauge
		stop, polled := make(chan struct{}), make(chan struct{})
		readings := 0
		go func() {
			defer close(polled)
			for {
				select {
				case <-stop:
					return
				default:
				}
				if bad := check(); bad != "" {
					t.Errorf("reading %d: %s", readings, bad)
					return
				}
				readings++
			}
		}()
		defer func() {
			close(stop)
			<-polled
			assert.Positive(t, readings, "the count was read while they contended")
		}()
		var wg sync.WaitGroup
		for i := range goroutines {
			wg.Go(func() {
				for range rounds {
					release, err := hold(i)
					if !assert.NoError(t, err) {
						return
					}
					g.enter()
					g.leave()
					assert.NoError(t, release())
				}
			})
		}
		wg.Wait()
		assert.LessOrEqual(t, g.most.Load(), int64(permits))
	}

	t.Run("counting", func(t *testing.T) {
		t.Parallel()
		name := uniqueName(t)
		sems := []*semaphore.Semaphore{newSem(t, clients[0], name), newSem(t, clients[1], name)}
		ok, err := sems[0].TrySetPermits(ctx, permits)
		require.NoError(t, err)
		require.True(t, ok)
		contend(t, func(i int) (func() error, error) {
			s := sems[i%2]
			return func() error { return s.Release(ctx, 1) }, s.Acquire(ctx, 1)
		}, func() string {
			n, err := sems[0].Available(ctx)
			if err != nil || n < 0 || n > permits {
				return fmt.Sprintf("%d available of %d (%v)", n, permits, err)
			}
			return ""
		})
		assert.Equal(t, int64(permits), available(t, sems[0]))
	})

	t.Run("permit", func(t *testing.T) {
		t.Parallel()
		name := uniqueName(t)
		sems := []*semaphore.PermitSemaphore{newPermitSem(t, clients[0], name), newPermitSem(t, clients[1], name)}
		ok, err := sems[0].TrySetPermits(ctx, permits)
		require.NoError(t, err)
		require.True(t, ok)
		contend(t, func(i int) (func() error, error) {
			s := sems[i%2]
			p, err := s.Acquire(ctx)
			return func() error { return s.Release(ctx, p) }, err
		}, func() string {
			// Available and held in one reading: their sum is the count.
			n, err := sems[0].Permits(ctx)
			if err != nil || n != permits {
				return fmt.Sprintf("%d permits, available and held, of %d (%v)", n, permits, err)
			}
			return ""
		})
		assert.Equal(t, int64(permits), available(t, sems[0]))
		held, err := sems[0].Held(ctx)
		require.NoError(t, err)
		assert.Zero(t, held)
	})
}

func TestReleaseWakesUpToN(t *testing.T) {
	// Not parallel: it reads the process-wide wake-up counters.
	c := dstest.Client(t)
	s := newSem(t, c, uniqueName(t))
	ctx := context.Background()
	_, err := s.TrySetPermits(ctx, 0)
	require.NoError(t, err)

	const waiters = 5
	got := make(chan struct{}, waiters)
	for range waiters {
		go func() {
			if assert.NoError(t, s.Acquire(ctx, 1)) {
				got <- struct{}{}
			}
		}()
	}
	waitForWaiters(t, c, s.Key(), waiters)
	stats := acquire.Counters()
	attempts, notified, timer := stats.Attempts.Load(), stats.Notified.Load(), stats.Timer.Load()

	require.NoError(t, s.Release(ctx, 2))
	<-got
	<-got
	assert.Equal(t, notified+2, stats.Notified.Load(), "a release of 2 wakes 2 waiters, not all")
	assert.Equal(t, attempts+2, stats.Attempts.Load())
	assert.Zero(t, available(t, s))
	waitForWaiters(t, c, s.Key(), waiters-2)

	require.NoError(t, s.Release(ctx, waiters-2))
	for range waiters - 2 {
		<-got
	}
	assert.Equal(t, notified+waiters, stats.Notified.Load())
	assert.Equal(t, timer, stats.Timer.Load(), "no wake-up by timer")
}

func TestBackToBackReleasesWakeEveryWaiter(t *testing.T) {
	t.Parallel()
	// The second release's wake-up can reach the first waiter while its
	// attempt is on the wire; it must be passed on, not lost. A waiter window
	// of an hour turns a lost wake-up into a timeout.
	c := dstest.Client(t, func(o *distsync.Options) { o.WaiterWindow = time.Hour })
	for i := range 50 {
		s := newSem(t, c, uniqueName(t))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		ok, err := s.TrySetPermits(ctx, 0) // set: a Release adds to it
		require.NoError(t, err)
		require.True(t, ok)
		done := make(chan error, 2)
		go func() { done <- s.Acquire(ctx, 1) }()
		waitForWaiters(t, c, s.Key(), 1)
		go func() { done <- s.Acquire(ctx, 1) }()
		waitForWaiters(t, c, s.Key(), 2)
		require.NoError(t, s.Release(ctx, 1))
		time.Sleep(time.Duration(i%10) * 50 * time.Microsecond) // vary the interleaving
		require.NoError(t, s.Release(ctx, 1))
		require.NoError(t, <-done, "round %d", i)
		require.NoError(t, <-done, "round %d", i)
		cancel()
	}
}

func TestWaiterNeedingMoreIsNotWokenBySmallRelease(t *testing.T) {
	// Not parallel: it reads the process-wide wake-up counters.
	c := dstest.Client(t)
	s := newSem(t, c, uniqueName(t))
	ctx := context.Background()
	_, err := s.TrySetPermits(ctx, 0)
	require.NoError(t, err)

	big, small := make(chan error, 1), make(chan error, 1)
	go func() { big <- s.Acquire(ctx, 3) }()
	waitForWaiters(t, c, s.Key(), 1)
	go func() { small <- s.Acquire(ctx, 1) }()
	waitForWaiters(t, c, s.Key(), 2)
	stats := acquire.Counters()
	notified := stats.Notified.Load()

	// One permit: the waiter needing one gets it; the one needing three is
	// not woken for it.
	require.NoError(t, s.Release(ctx, 1))
	require.NoError(t, <-small)
	assert.Equal(t, notified+1, stats.Notified.Load())
	for range 2 {
		require.NoError(t, s.Release(ctx, 1))
	}
	assert.Equal(t, notified+1, stats.Notified.Load(), "two permits do not wake a waiter needing three")
	require.NoError(t, s.Release(ctx, 1))
	require.NoError(t, <-big)
	assert.Equal(t, notified+2, stats.Notified.Load())
	assert.Zero(t, available(t, s))
}

func TestAcquireWaitsUntilPermitsAreSet(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	s := newSem(t, c, uniqueName(t))
	ctx := context.Background()
	assert.ErrorIs(t, s.TryAcquire(ctx, 1, 0), distsync.ErrNotAcquired, "never set: no permits")

	done := make(chan error, 1)
	go func() { done <- s.Acquire(ctx, 2) }()
	waitForWaiters(t, c, s.Key(), 1)
	ok, err := s.TrySetPermits(ctx, 3)
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, <-done)
	assert.Equal(t, int64(1), available(t, s))

	ok, err = s.TrySetPermits(ctx, 10)
	require.NoError(t, err)
	assert.False(t, ok, "permits are set only once")
	assert.Equal(t, int64(1), available(t, s))
}

// withDeadline returns a context that ends with context.DeadlineExceeded
// after d.
func withDeadline(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// A blocking acquisition ended by its context's deadline wraps ErrNotSet
// beside context.DeadlineExceeded while the permits were never set, and
// only the deadline once they are set and taken: a semaphore nobody sized
// is told apart from a full one. Both kinds.
func TestAcquireDeadlineTellsNeverSetFromFull(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	ctx := context.Background()
	const d = 300 * time.Millisecond

	s := newSem(t, c, uniqueName(t))
	err := s.Acquire(withDeadline(t, d), 2)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.ErrorIs(t, err, distsync.ErrNotSet, "never set")
	assert.NotErrorIs(t, err, distsync.ErrNotAcquired, "a blocking wait ends by its context, not a budget")
	_, err = s.TrySetPermits(ctx, 2)
	require.NoError(t, err)
	require.NoError(t, s.Acquire(ctx, 2))
	err = s.Acquire(withDeadline(t, d), 1)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.NotErrorIs(t, err, distsync.ErrNotSet, "full, not unset")

	ps := newPermitSem(t, c, uniqueName(t))
	_, err = ps.Acquire(withDeadline(t, d))
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.ErrorIs(t, err, distsync.ErrNotSet, "never set")
	require.NoError(t, ps.SetPermits(ctx, 1))
	p, err := ps.Acquire(ctx)
	require.NoError(t, err)
	_, err = ps.Acquire(withDeadline(t, d))
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.NotErrorIs(t, err, distsync.ErrNotSet, "full, not unset")
	require.NoError(t, ps.Release(ctx, p))
}

// A wait without a budget (distsync.Forever) cancelled while the permits
// were never set wraps ErrNotSet beside context.Canceled.
func TestCancelledWaitOnNeverSet(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	ps := newPermitSem(t, c, uniqueName(t))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := ps.TryAcquire(ctx, distsync.Forever, 0)
		done <- err
	}()
	waitForWaiters(t, c, ps.Key(), 1) // refused, and registered: never set
	cancel()
	err := <-done
	assert.ErrorIs(t, err, context.Canceled)
	assert.ErrorIs(t, err, distsync.ErrNotSet)
}

func TestDrain(t *testing.T) {
	t.Parallel()
	s := newSem(t, dstest.Client(t), uniqueName(t))
	ctx := context.Background()
	n, err := s.Drain(ctx)
	require.NoError(t, err)
	assert.Zero(t, n, "never set")

	_, err = s.TrySetPermits(ctx, 5)
	require.NoError(t, err)
	require.NoError(t, s.Acquire(ctx, 2))
	n, err = s.Drain(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(3), n)
	assert.Zero(t, available(t, s))
	assert.ErrorIs(t, s.TryAcquire(ctx, 1, 0), distsync.ErrNotAcquired)

	require.NoError(t, s.Release(ctx, 2))
	require.NoError(t, s.AddPermits(ctx, -5))
	n, err = s.Drain(ctx)
	require.NoError(t, err)
	assert.Zero(t, n, "a negative count is not drained")
	assert.Equal(t, int64(-3), available(t, s))
}

func TestNegativeAddPermits(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	s := newSem(t, c, uniqueName(t))
	ctx := context.Background()
	require.NoError(t, s.AddPermits(ctx, 2), "adding sets unset permits")
	require.NoError(t, s.AddPermits(ctx, -3))
	assert.Equal(t, int64(-1), available(t, s))
	assert.ErrorIs(t, s.TryAcquire(ctx, 1, 0), distsync.ErrNotAcquired)

	done := make(chan error, 1)
	go func() { done <- s.Acquire(ctx, 1) }()
	waitForWaiters(t, c, s.Key(), 1)
	require.NoError(t, s.Release(ctx, 1)) // back to 0: still nothing to take
	select {
	case err := <-done:
		t.Fatalf("acquired from an empty semaphore: %v", err)
	default:
	}
	require.NoError(t, s.Release(ctx, 1))
	require.NoError(t, <-done)
	assert.Zero(t, available(t, s))
}

func TestBadCounts(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	s := newSem(t, c, uniqueName(t))
	ctx := context.Background()
	for _, n := range []int64{0, -1, semaphore.MaxPermits + 1, -1 << 62} {
		assert.ErrorIs(t, s.Acquire(ctx, n), distsync.ErrInvalidArgument, "Acquire(%d)", n)
		assert.ErrorIs(t, s.TryAcquire(ctx, n, 0), distsync.ErrInvalidArgument, "TryAcquire(%d)", n)
		assert.ErrorIs(t, s.Release(ctx, n), distsync.ErrInvalidArgument, "Release(%d)", n)
	}
	for _, n := range []int64{-1, semaphore.MaxPermits + 1} {
		_, err := s.TrySetPermits(ctx, n)
		assert.ErrorIs(t, err, distsync.ErrInvalidArgument, "TrySetPermits(%d)", n)
		err = newPermitSem(t, c, uniqueName(t)).SetPermits(ctx, n)
		assert.ErrorIs(t, err, distsync.ErrInvalidArgument, "SetPermits(%d)", n)
	}
	for _, n := range []int64{semaphore.MaxPermits + 1, -semaphore.MaxPermits - 1} {
		assert.ErrorIs(t, s.AddPermits(ctx, n), distsync.ErrInvalidArgument, "AddPermits(%d)", n)
	}
	assert.ErrorIs(t, s.TryAcquire(ctx, 1, -time.Second), distsync.ErrInvalidArgument)

	// Sums beyond the range are refused on the server and change nothing.
	ok, err := s.TrySetPermits(ctx, semaphore.MaxPermits)
	require.NoError(t, err)
	require.True(t, ok)
	assert.ErrorIs(t, s.Release(ctx, 1), distsync.ErrInvalidArgument)
	assert.Equal(t, int64(semaphore.MaxPermits), available(t, s))
	require.NoError(t, s.Acquire(ctx, semaphore.MaxPermits))
	require.NoError(t, s.AddPermits(ctx, -semaphore.MaxPermits))
	assert.ErrorIs(t, s.AddPermits(ctx, -1), distsync.ErrInvalidArgument)
	assert.Equal(t, int64(-semaphore.MaxPermits), available(t, s))

	for _, name := range []string{"", "a{b", string(make([]byte, 2000))} {
		_, err := c.Semaphore(name)
		assert.ErrorIs(t, err, distsync.ErrInvalidName)
		_, err = c.PermitSemaphore(name)
		assert.ErrorIs(t, err, distsync.ErrInvalidName)
	}
}

func TestTryAcquireGivesUp(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	s := newSem(t, c, uniqueName(t))
	ctx := context.Background()
	_, err := s.TrySetPermits(ctx, 1)
	require.NoError(t, err)
	assert.ErrorIs(t, s.TryAcquire(ctx, 2, 50*time.Millisecond), distsync.ErrNotAcquired)
	waitForWaiters(t, c, s.Key(), 0) // it left the waiter set

	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Acquire(cctx, 2) }()
	waitForWaiters(t, c, s.Key(), 1)
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
	waitForWaiters(t, c, s.Key(), 0)
	assert.Equal(t, int64(1), available(t, s))
}

func TestWaiterThatGivesUpPassesItsWakeOn(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t, func(o *distsync.Options) { o.WaiterWindow = time.Hour })
	s := newSem(t, c, uniqueName(t))
	ctx := context.Background()
	_, err := s.TrySetPermits(ctx, 0)
	require.NoError(t, err)

	first, cancel := context.WithCancel(ctx)
	gaveUp := make(chan error, 1)
	go func() { gaveUp <- s.Acquire(first, 1) }()
	waitForWaiters(t, c, s.Key(), 1)
	got := make(chan error, 1)
	go func() { got <- s.Acquire(ctx, 1) }()
	waitForWaiters(t, c, s.Key(), 2)

	// A permit appears without a notification, as if its wake-up had gone
	// to the first waiter, which then gives up: the second must be woken.
	rc := c.Rueidis()
	require.NoError(t, rc.Do(ctx, rc.B().Hset().Key(s.Key()).FieldValue().FieldValue("n", "1").Build()).Error())
	cancel()
	assert.ErrorIs(t, <-gaveUp, context.Canceled)
	select {
	case err := <-got:
		require.NoError(t, err)
	case <-time.After(time.Minute):
		t.Fatal("the remaining waiter was not woken")
	}
}

func TestClosedClient(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	s := newSem(t, c, uniqueName(t))
	ps := newPermitSem(t, c, uniqueName(t))
	ctx := context.Background()
	errc := make(chan error, 1)
	go func() { errc <- s.Acquire(ctx, 1) }()
	waitForWaiters(t, c, s.Key(), 1)
	c.Close()
	assert.ErrorIs(t, <-errc, distsync.ErrClosed, "a waiter returns when its Client closes")
	assert.ErrorIs(t, s.Acquire(ctx, 1), distsync.ErrClosed)
	assert.ErrorIs(t, s.Release(ctx, 1), distsync.ErrClosed)
	_, err := s.Available(ctx)
	assert.ErrorIs(t, err, distsync.ErrClosed)
	_, err = ps.Acquire(ctx)
	assert.ErrorIs(t, err, distsync.ErrClosed)
}

func TestDeleteLeavesNoKeys(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	name := uniqueName(t)
	s := newPermitSem(t, c, name)
	ctx := context.Background()
	_, err := s.TrySetPermits(ctx, 1)
	require.NoError(t, err)
	p, err := s.Acquire(ctx)
	require.NoError(t, err)
	got := acquireLater(t, ctx, s)
	waitForWaiters(t, c, s.Key(), 1)
	require.NoError(t, s.Release(ctx, p))
	require.NoError(t, s.Release(ctx, <-got))
	existed, err := s.Delete(ctx)
	require.NoError(t, err)
	assert.True(t, existed)
	assert.Empty(t, dstest.Keys(t, c, s.Key()+"*"))
	existed, err = s.Delete(ctx)
	require.NoError(t, err)
	assert.False(t, existed)

	// The counting semaphore, with a waiter that gave up.
	cs := newSem(t, c, uniqueName(t))
	_, err = cs.TrySetPermits(ctx, 1)
	require.NoError(t, err)
	require.NoError(t, cs.Acquire(ctx, 1))
	require.ErrorIs(t, cs.TryAcquire(ctx, 1, 10*time.Millisecond), distsync.ErrNotAcquired)
	require.NoError(t, cs.Release(ctx, 1))
	existed, err = cs.Delete(ctx)
	require.NoError(t, err)
	assert.True(t, existed)
	assert.Empty(t, dstest.Keys(t, c, cs.Key()+"*"), "the kind goes with the semaphore")
	ps := newPermitSem(t, c, cs.Name())
	_, err = ps.TrySetPermits(ctx, 1)
	require.NoError(t, err, "a deleted semaphore's name may take another kind")
	_, err = ps.Delete(ctx)
	require.NoError(t, err)
}

// benchParallel runs acquire+release pairs from GOMAXPROCS*p goroutines for
// p in ps: fewer goroutines than the 100 permits never wait, more do.
func benchParallel(b *testing.B, pair func() error) {
	for _, p := range []int{1, 16, 100} {
		b.Run("goroutines="+strconv.Itoa(p*runtime.GOMAXPROCS(0)), func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(p)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := pair(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

func BenchmarkSemaphore(b *testing.B) {
	s := newSem(b, dstest.Client(b), uniqueName(b))
	ctx := context.Background()
	_, err := s.TrySetPermits(ctx, 100)
	require.NoError(b, err)
	benchParallel(b, func() error {
		if err := s.Acquire(ctx, 1); err != nil {
			return err
		}
		return s.Release(ctx, 1)
	})
}

func BenchmarkPermitSemaphore(b *testing.B) {
	s := newPermitSem(b, dstest.Client(b), uniqueName(b))
	ctx := context.Background()
	_, err := s.TrySetPermits(ctx, 100)
	require.NoError(b, err)
	benchParallel(b, func() error {
		p, err := s.Acquire(ctx)
		if err != nil {
			return err
		}
		return s.Release(ctx, p)
	})
}

// A wake-up that went to a waiter which then vanished reaches a live waiter
// of another Client within a short bound, for both semaphores: a waiter
// whose Client closes passes the wake-up on as it leaves (leave.lua), and a
// release's wake-up reaches every Client, so a crashed one's waiter does
// not keep it. Waiter windows of an hour turn a wake-up that does not move
// on into a timeout.
func TestWakeToVanishedWaiterMovesOn(t *testing.T) {
	long := func(o *distsync.Options) { o.WaiterWindow = time.Hour }
	type sem interface {
		TrySetPermits(context.Context, int64) (bool, error)
		AddPermits(context.Context, int64) error
		Key() string
	}
	kinds := []struct {
		name    string
		make    func(c *distsync.Client, name string) sem
		acquire func(ctx context.Context, s sem) error
	}{
		{"counting", func(c *distsync.Client, name string) sem { return newSem(t, c, name) },
			func(ctx context.Context, s sem) error { return s.(*semaphore.Semaphore).Acquire(ctx, 1) }},
		{"permit", func(c *distsync.Client, name string) sem { return newPermitSem(t, c, name) },
			func(ctx context.Context, s sem) error {
				_, err := s.(*semaphore.PermitSemaphore).Acquire(ctx)
				return err
			}},
	}
	for _, k := range kinds {
		for _, how := range []string{"closed", "crashed"} {
			t.Run(k.name+" "+how, func(t *testing.T) {
				t.Parallel()
				gone, next := dstest.Client(t, long), dstest.Client(t, long)
				name := uniqueName(t)
				sg, sn := k.make(gone, name), k.make(next, name)
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				t.Cleanup(cancel)
				_, err := sn.TrySetPermits(ctx, 0)
				require.NoError(t, err)
				ghost := make(chan error, 1)
				go func() { ghost <- k.acquire(ctx, sg) }()
				waitForWaiters(t, next, sn.Key(), 1)
				live := make(chan error, 1)
				go func() { live <- k.acquire(ctx, sn) }()
				waitForWaiters(t, next, sn.Key(), 2)

				start := time.Now()
				if how == "closed" {
					// A permit appears without a wake-up, as if the
					// release's had gone to the first waiter alone; its
					// Client then closes.
					rc := next.Rueidis()
					require.NoError(t, rc.Do(ctx, rc.B().Hincrby().Key(sn.Key()).Field("n").Increment(1).Build()).Error())
					gone.Close()
				} else {
					dstest.Crash(gone)
					require.NoError(t, sn.AddPermits(ctx, 1))
				}
				require.ErrorIs(t, <-ghost, distsync.ErrClosed)
				select {
				case err := <-live:
					require.NoError(t, err)
				case <-time.After(10 * time.Second): // the bound, widened for a loaded machine
					t.Fatal("the live waiter was not woken")
				}
				t.Logf("the live waiter held %v after the other vanished", time.Since(start).Round(time.Millisecond))
			})
		}
	}
}
