package rwlock_test

import (
	"context"
	"errors"
	"runtime"
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
	"github.com/distsync/distsync/rwlock"
)

// Both lockers compose with multilock and redlock.
var _ distsync.Locker = (*rwlock.Side)(nil)

func TestMain(m *testing.M) {
	options = dstest.ExampleOptions(0)
	redistest.Main(m)
}

func newRW(t testing.TB, c *distsync.Client, name string, opts ...rwlock.Option) *rwlock.RWLock {
	t.Helper()
	rw, err := c.RWLock(name, opts...)
	require.NoError(t, err)
	return rw
}

func TestReadersShare(t *testing.T) {
	t.Parallel()
	c1, c2 := dstest.Client(t), dstest.Client(t)
	name := dstest.Name(t)
	rws := []*rwlock.RWLock{newRW(t, c1, name), newRW(t, c2, name)}
	ctx := context.Background()
	const readers = 10
	var held []context.Context
	for i := range readers {
		r, err := rws[i%2].Read().TryLock(ctx, 0, 0)
		require.NoError(t, err, "reader %d must not wait for the others", i)
		held = append(held, r)
	}
	n, err := rws[0].Read().Holders(ctx)
	require.NoError(t, err)
	assert.Equal(t, readers, n)
	locked, err := rws[1].Write().IsLocked(ctx)
	require.NoError(t, err)
	assert.False(t, locked)
	_, err = rws[1].Write().TryLock(ctx, 0, 0)
	assert.ErrorIs(t, err, distsync.ErrNotAcquired, "readers exclude a writer")

	for i, r := range held {
		require.NoError(t, rws[i%2].Read().Unlock(r))
	}
	w, err := rws[1].Write().TryLock(ctx, 0, 0)
	require.NoError(t, err)
	_, err = rws[0].Read().TryLock(ctx, 0, 0)
	assert.ErrorIs(t, err, distsync.ErrNotAcquired, "a writer excludes readers")
	require.NoError(t, rws[1].Write().Unlock(w))
}

func TestExclusion(t *testing.T) {
	t.Parallel()
	clients := []*distsync.Client{dstest.Client(t), dstest.Client(t)}
	name := dstest.Name(t)
	const goroutines, rounds = 32, 20
	var readers, writers atomic.Int32
	var maxReaders atomic.Int32
	var value, writes int // written only under the write lock
	var wg sync.WaitGroup
	ctx := context.Background()
	for g := range goroutines {
		rw := newRW(t, clients[g%2], name)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				if (g+i)%4 == 0 {
					w, err := rw.Write().Lock(ctx)
					if !assert.NoError(t, err) {
						return
					}
					assert.Equal(t, int32(1), writers.Add(1), "two writers at once")
					assert.Zero(t, readers.Load(), "a reader inside while writing")
					v := value
					runtime.Gosched()
					value = v + 1
					writes++
					writers.Add(-1)
					assert.NoError(t, rw.Write().Unlock(w))
					continue
				}
				r, err := rw.Read().Lock(ctx)
				if !assert.NoError(t, err) {
					return
				}
				n := readers.Add(1)
				for m := maxReaders.Load(); n > m && !maxReaders.CompareAndSwap(m, n); m = maxReaders.Load() {
				}
				assert.Zero(t, writers.Load(), "a writer inside while reading")
				_ = value
				runtime.Gosched()
				readers.Add(-1)
				assert.NoError(t, rw.Read().Unlock(r))
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, writes, value)
	assert.Equal(t, goroutines*rounds/4, writes)
	t.Logf("at most %d readers inside at once", maxReaders.Load())
}

func TestDowngrade(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	rw := newRW(t, c, dstest.Name(t))
	ctx := context.Background()
	base, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	w, err := rw.Write().Lock(base)
	require.NoError(t, err)
	r, err := rw.Read().TryLock(w, 0, 0)
	require.NoError(t, err, "the writer may take the read lock")

	// Another owner's reader waits for the write lock to go.
	got := make(chan context.Context, 1)
	go func() {
		o, err := rw.Read().Lock(ctx)
		assert.NoError(t, err)
		got <- o
	}()
	waitForWaiters(t, c, rw, "rwaiters", 1)
	require.NoError(t, rw.Write().Unlock(w))
	assert.NoError(t, r.Err(), "releasing the write lock keeps the read hold")
	var other context.Context
	select {
	case other = <-got:
	case <-time.After(time.Minute):
		t.Fatal("waiting reader not woken when the lock became a read lock")
	}
	n, err := rw.Read().Holders(ctx)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	_, err = rw.Write().TryLock(ctx, 0, 0)
	assert.ErrorIs(t, err, distsync.ErrNotAcquired)
	_, err = rw.Write().TryLock(r, 0, 0)
	assert.ErrorIs(t, err, distsync.ErrUpgrade, "after the downgrade the owner is a reader")

	// The read hold still ends with the context the write lock was taken on.
	stop := errors.New("caller gave up")
	cancel(stop)
	<-r.Done()
	assert.ErrorIs(t, context.Cause(r), stop)
	require.NoError(t, rw.Read().Unlock(r))
	require.NoError(t, rw.Read().Unlock(other))
}

func TestUpgradeRefused(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	rw := newRW(t, c, dstest.Name(t))
	ctx := context.Background()
	r, err := rw.Read().Lock(ctx)
	require.NoError(t, err)
	other, err := rw.Read().Lock(ctx)
	require.NoError(t, err)

	// Lock would wait forever; it must return at once instead.
	_, err = rw.Write().Lock(r)
	assert.ErrorIs(t, err, distsync.ErrUpgrade)
	assert.ErrorIs(t, err, distsync.ErrUpgrade)
	_, err = rw.Write().TryLock(r, time.Minute, 0)
	assert.ErrorIs(t, err, distsync.ErrUpgrade)
	waitForWaiters(t, c, rw, "wwaiters", 0) // no waiter entry left behind
	n, err := rw.Read().HoldCount(r)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "the read hold is untouched")

	require.NoError(t, rw.Read().Unlock(r))
	require.NoError(t, rw.Read().Unlock(other))
}

func TestCrashedReaderExpiresAlone(t *testing.T) {
	t.Parallel()
	const lease = time.Second
	short := func(o *distsync.Options) { o.Watchdog.Lease = lease }
	alive, crashed := dstest.Client(t, short), dstest.Client(t, short)
	name := dstest.Name(t)
	rw := newRW(t, alive, name)
	ctx := context.Background()
	kept, err := rw.Read().Lock(ctx)
	require.NoError(t, err)
	_, err = newRW(t, crashed, name).Read().Lock(ctx)
	require.NoError(t, err)
	n, err := rw.Read().Holders(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, n)

	dstest.Crash(crashed) // its watchdog stops; its hold is never released
	require.Eventually(t, func() bool {
		n, err := rw.Read().Holders(ctx)
		return err == nil && n == 1
	}, 10*time.Second, 10*time.Millisecond, "the crashed reader's hold must expire")

	require.NoError(t, kept.Err(), "the live reader keeps its hold")
	n, err = rw.Read().HoldCount(kept)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	_, err = rw.Write().TryLock(ctx, 0, 0)
	assert.ErrorIs(t, err, distsync.ErrNotAcquired, "the live reader still excludes writers")
	assert.Positive(t, alive.Stats().Renewals)

	require.NoError(t, rw.Read().Unlock(kept))
	w, err := rw.Write().TryLock(ctx, 0, 0)
	require.NoError(t, err)
	require.NoError(t, rw.Write().Unlock(w))
}

func TestWriterPreference(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	name := dstest.Name(t)
	ctx := context.Background()
	const readers = 8
	var acquisitions atomic.Int64 // reader acquisitions
	var writing atomic.Bool
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range readers {
		rw := newRW(t, c, name, rwlock.PreferWriters())
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				r, err := rw.Read().Lock(ctx)
				if !assert.NoError(t, err) {
					return
				}
				assert.False(t, writing.Load(), "a reader inside while writing")
				acquisitions.Add(1)
				runtime.Gosched()
				assert.NoError(t, rw.Read().Unlock(r))
			}
		}()
	}
	// The readers overlap: the lock is continuously read-locked.
	require.Eventually(t, func() bool { return acquisitions.Load() >= 4*readers }, time.Minute, time.Millisecond)

	rw := newRW(t, c, name, rwlock.PreferWriters())
	// A reader of the test's own pins the lock while the writer queues, so the
	// writer cannot slip into a gap between the readers.
	pin, err := rw.Read().Lock(ctx)
	require.NoError(t, err)
	got := make(chan context.Context, 1)
	go func() {
		w, err := rw.Write().Lock(ctx)
		assert.NoError(t, err)
		writing.Store(true)
		got <- w
	}()
	waitForWaiters(t, c, rw, "wwaiters", 1)
	registered := acquisitions.Load()
	require.NoError(t, rw.Read().Unlock(pin))
	var w context.Context
	select {
	case w = <-got:
	case <-time.After(time.Minute):
		t.Fatal("writer starved")
	}
	after := acquisitions.Load() - registered
	// Once the writer waits, no new reader enters: at most the readers that
	// were granted just before count afterwards.
	assert.LessOrEqual(t, after, int64(readers), "reader acquisitions after the writer queued")
	t.Logf("reader acquisitions before the writer queued: %d, after: %d", registered, after)
	writing.Store(false)
	require.NoError(t, rw.Write().Unlock(w))
	close(stop)
	wg.Wait()
}

func TestReleaseWakesByNotification(t *testing.T) {
	// Not parallel: it reads the process-wide wake-up counters.
	c := dstest.Client(t)
	rw := newRW(t, c, dstest.Name(t))
	ctx := context.Background()
	stats := acquire.Counters()
	timerBefore := stats.Timer.Load()

	// A write release wakes every waiter: here three readers. Long explicit
	// leases: a timer would fire only after them.
	w, err := rw.Write().TryLock(ctx, 0, 10*time.Minute)
	require.NoError(t, err)
	got := make(chan context.Context, 3)
	for range 3 {
		go func() {
			r, err := rw.Read().TryLock(ctx, time.Minute, 10*time.Minute)
			assert.NoError(t, err)
			got <- r
		}()
	}
	waitForWaiters(t, c, rw, "rwaiters", 3)
	require.NoError(t, rw.Write().Unlock(w))
	var held []context.Context
	for range 3 {
		held = append(held, <-got)
	}

	// The read release that frees the lock wakes the waiting writer.
	wgot := make(chan context.Context, 1)
	go func() {
		w, err := rw.Write().TryLock(ctx, time.Minute, 0)
		assert.NoError(t, err)
		wgot <- w
	}()
	waitForWaiters(t, c, rw, "wwaiters", 1)
	for _, r := range held {
		require.NoError(t, rw.Read().Unlock(r))
	}
	w = <-wgot
	require.NoError(t, rw.Write().Unlock(w))
	assert.Equal(t, timerBefore, stats.Timer.Load(), "no wake-up by timer")
}

func TestWatchdogKeepsHoldsAlive(t *testing.T) {
	t.Parallel()
	const lease = 900 * time.Millisecond
	c := dstest.Client(t, func(o *distsync.Options) { o.Watchdog.Lease = lease })
	rw := newRW(t, c, dstest.Name(t))
	ctx := context.Background()
	w, err := rw.Write().Lock(ctx)
	require.NoError(t, err)
	r, err := rw.Read().Lock(w)
	require.NoError(t, err)
	time.Sleep(4 * lease) // only renewals keep the holds
	require.NoError(t, w.Err())
	require.NoError(t, r.Err())
	for _, l := range []*rwlock.Side{rw.Read(), rw.Write()} {
		n, err := l.HoldCount(w)
		require.NoError(t, err)
		assert.Equal(t, 1, n)
	}
	require.NoError(t, rw.Write().Unlock(w))
	require.NoError(t, rw.Read().Unlock(r))
	assert.Zero(t, c.Stats().HeldLeases, "released holds are not renewed")
}

func TestForceUnlock(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	rw := newRW(t, c, dstest.Name(t))
	ctx := context.Background()
	w, err := rw.Write().Lock(ctx)
	require.NoError(t, err)
	r, err := rw.Read().Lock(w)
	require.NoError(t, err)

	ok, err := rw.Write().ForceUnlock(ctx)
	require.NoError(t, err)
	assert.True(t, ok)
	locked, err := rw.Read().IsLocked(ctx)
	require.NoError(t, err)
	assert.True(t, locked, "forcing the write lock leaves the read holds")
	ok, err = rw.Read().ForceUnlock(ctx)
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = rw.Read().ForceUnlock(ctx)
	require.NoError(t, err)
	assert.False(t, ok)
	assert.ErrorIs(t, rw.Read().Unlock(r), distsync.ErrNotHeld)
	assert.ErrorIs(t, rw.Write().Unlock(w), distsync.ErrNotHeld)
	assert.Empty(t, dstest.Keys(t, c, rw.Write().Key()+"*"))
}

// The sides are apart: a read hold is no write hold. (What every lock kind
// does with a foreign or released hold is TestLockContract's misuse.)
func TestNotHeld(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	rw := newRW(t, c, dstest.Name(t))
	ctx := context.Background()
	r, err := rw.Read().Lock(ctx)
	require.NoError(t, err)
	assert.ErrorIs(t, rw.Write().Unlock(r), distsync.ErrNotHeld, "a reader does not hold the write lock")
	_, err = rw.Write().Token(r)
	assert.ErrorIs(t, err, distsync.ErrNotHeld)
	require.NoError(t, rw.Read().Unlock(r), "the refused write Unlock left the read hold")
}

func TestFencingTokensIncrease(t *testing.T) {
	t.Parallel()
	c1, c2 := dstest.Client(t), dstest.Client(t)
	name := dstest.Name(t)
	rws := []*rwlock.RWLock{newRW(t, c1, name), newRW(t, c2, name)}
	ctx := context.Background()
	var last int64
	for i := range 12 {
		l := rws[i%2].Write()
		if i%3 != 0 {
			l = rws[i%2].Read()
		}
		held, err := l.Lock(ctx)
		require.NoError(t, err)
		tok, err := l.Token(held)
		require.NoError(t, err)
		assert.Greater(t, tok, last)
		last = tok
		require.NoError(t, l.Unlock(held))
	}
}

func TestNoKeysLeft(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	rw := newRW(t, c, dstest.Name(t))
	ctx := context.Background()
	w, err := rw.Write().Lock(ctx)
	require.NoError(t, err)
	var wg sync.WaitGroup
	for i := range 4 {
		l := rw.Read()
		if i%2 == 0 {
			l = rw.Write()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, err := l.Lock(ctx)
			if assert.NoError(t, err) {
				assert.NoError(t, l.Unlock(h))
			}
		}()
	}
	waitForWaiters(t, c, rw, "rwaiters", 2)
	waitForWaiters(t, c, rw, "wwaiters", 2)
	require.NoError(t, rw.Write().Unlock(w))
	wg.Wait()
	assert.Empty(t, dstest.Keys(t, c, rw.Write().Key()+"*"))
}

// The write lock orders first among lockers, and both sides bear the
// lock's name. (Bad names and durations are TestLockContract's misuse.)
func TestSideKeys(t *testing.T) {
	t.Parallel()
	rw := newRW(t, dstest.Client(t), dstest.Name(t))
	assert.Less(t, rw.Write().Key(), rw.Read().Key(), "the write lock orders first")
	assert.Equal(t, rw.Name(), rw.Read().Name())
}

// waitForWaiters waits until the waiter set with suffix ("rwaiters" or
// "wwaiters") has n members.
func waitForWaiters(t *testing.T, c *distsync.Client, rw *rwlock.RWLock, suffix string, n int64) {
	t.Helper()
	dstest.WaitWaiters(t, c, rw.Write().Key()+":"+suffix, n)
}
