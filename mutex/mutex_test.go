package mutex_test

import (
	"context"
	"maps"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/acquire"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
	"github.com/distsync/distsync/mutex"
)

func TestMain(m *testing.M) {
	options = dstest.ExampleOptions(0)
	redistest.Main(m)
}

func newMutex(t testing.TB, c *distsync.Client, name string) *mutex.Mutex {
	t.Helper()
	m, err := c.Mutex(name)
	require.NoError(t, err)
	return m
}

func TestMutualExclusion(t *testing.T) {
	t.Parallel()
	clients := []*distsync.Client{dstest.Client(t), dstest.Client(t)}
	name := dstest.Name(t)
	const goroutines, rounds = 32, 20
	var counter int // deliberately not atomic: only the lock protects it
	var wg sync.WaitGroup
	ctx := context.Background()
	for g := range goroutines {
		m := newMutex(t, clients[g%2], name)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				lctx, err := m.Lock(ctx)
				if !assert.NoError(t, err) {
					return
				}
				v := counter
				runtime.Gosched()
				counter = v + 1
				assert.NoError(t, m.Unlock(lctx))
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, goroutines*rounds, counter)
}

// An unlock whose reply is lost is sent again: the retry learns that the
// server applied it, releases no other acquisition's count, and a retried
// final unlock is not an error. (A retry by the caller, after Unlock
// returned the failure, is integration's TestRetriedReleaseIsExact.)
func TestRetriedUnlockAfterLostReply(t *testing.T) {
	t.Parallel()
	c, f := dstest.FaultyClient(t, redistest.Shared(t), 0)
	m := newMutex(t, c, dstest.Name(t))
	ctx := context.Background()
	outer, err := m.Lock(ctx)
	require.NoError(t, err)
	inner, err := m.Lock(outer)
	require.NoError(t, err)

	unlock := dstest.Script("Release one acquisition, by its id")
	lost := f.Inject(&dstest.Rule{Match: unlock, Fault: dstest.LoseReply, Times: 1})
	// The server applied it; the retry must neither fail nor release the outer hold.
	require.NoError(t, m.Unlock(inner))
	require.Equal(t, 1, lost.Hits(), "the first reply was lost")
	n, err := m.HoldCount(outer)
	require.NoError(t, err)
	assert.Equal(t, 1, n)

	lost = f.Inject(&dstest.Rule{Match: unlock, Fault: dstest.LoseReply, Times: 1})
	require.NoError(t, m.Unlock(outer), "a retried final unlock is not an error")
	require.Equal(t, 1, lost.Hits(), "the first reply was lost")
	locked, err := m.IsLocked(ctx)
	require.NoError(t, err)
	assert.False(t, locked)
	assert.ErrorIs(t, m.Unlock(outer), distsync.ErrNotHeld, "after a confirmed release, another is an error")
}

func TestWatchdogKeepsLockAlive(t *testing.T) {
	t.Parallel()
	redistest.RequireReal(t, redistest.Shared(t), redistest.RenewalsOnTime)
	const lease = 900 * time.Millisecond
	c := dstest.Client(t, func(o *distsync.Options) { o.Watchdog.Lease = lease })
	m := newMutex(t, c, dstest.Name(t))
	ctx := context.Background()
	held, err := m.Lock(ctx)
	require.NoError(t, err)
	// Let more than three leases pass: only renewals keep the key.
	time.Sleep(4 * lease)
	require.NoError(t, held.Err(), "the lease must not be lost")
	locked, err := m.IsLocked(ctx)
	require.NoError(t, err)
	assert.True(t, locked)
	assert.GreaterOrEqual(t, c.Stats().Renewals, int64(4), "four leases need at least four renewals")
	_, err = m.TryLock(ctx, 0, 0)
	assert.ErrorIs(t, err, distsync.ErrNotAcquired)
	require.NoError(t, m.Unlock(held))
	assert.Zero(t, c.Stats().HeldLeases, "a released lease is not renewed")
}

func TestDeletedKeyCancelsHolder(t *testing.T) {
	t.Parallel()
	const lease = 3 * time.Second
	c := dstest.Client(t, func(o *distsync.Options) { o.Watchdog.Lease = lease })
	m := newMutex(t, c, dstest.Name(t))
	held, err := m.Lock(context.Background())
	require.NoError(t, err)
	rc := c.Rueidis()
	require.NoError(t, rc.Do(context.Background(), rc.B().Del().Key(m.Key()).Build()).Error())
	deleted := time.Now()
	select {
	case <-held.Done():
	case <-time.After(lease/3 + time.Second):
		t.Fatal("holder's context not cancelled within one renewal interval")
	}
	assert.ErrorIs(t, context.Cause(held), distsync.ErrLeaseLost)
	t.Logf("lost after %v (renewal interval %v)", time.Since(deleted), lease/3)
}

func TestWaiterContextCancelled(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	m := newMutex(t, c, dstest.Name(t))
	held, err := m.Lock(context.Background())
	require.NoError(t, err)
	defer m.Unlock(held)

	wctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := m.Lock(wctx)
		errc <- err
	}()
	waitForWaiters(t, c, m, 1)
	cancel()
	err = <-errc
	assert.ErrorIs(t, err, context.Canceled)
	waitForWaiters(t, c, m, 0) // it left the waiter set
}

// TestWaitersExpireAfterTheLastLeft: a registration notes in the lock until
// when the waiters' keys live at least, and the next skips their expiry
// within that; when the last waiter leaves, the keys go, and the next
// registration makes them anew: they must get an expiry again (a waiter that
// vanished would otherwise leave them for ever).
func TestWaitersExpireAfterTheLastLeft(t *testing.T) {
	t.Parallel()
	holder, c := dstest.Client(t), dstest.Client(t)
	name := dstest.Name(t)
	hm, m := newMutex(t, holder, name), newMutex(t, c, name)
	held, err := hm.Lock(context.Background())
	require.NoError(t, err)
	defer hm.Unlock(held)

	wait := func() (context.CancelFunc, chan error) {
		wctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			_, err := m.Lock(wctx)
			errc <- err
		}()
		waitForWaiters(t, c, m, 1)
		return cancel, errc
	}
	ttls := func() (q, e int64) {
		rc := c.Rueidis()
		ctx := context.Background()
		q, err := rc.Do(ctx, rc.B().Pttl().Key(m.Key()+":waiters").Build()).AsInt64()
		require.NoError(t, err)
		e, err = rc.Do(ctx, rc.B().Pttl().Key(m.Key()+":waiting").Build()).AsInt64()
		require.NoError(t, err)
		return q, e
	}
	cancel, errc := wait()
	q, e := ttls()
	assert.Positive(t, q, "the first registration sets the waiters' expiry")
	assert.Positive(t, e)
	cancel()
	require.ErrorIs(t, <-errc, context.Canceled)
	waitForWaiters(t, c, m, 0)

	cancel, errc = wait()
	defer func() { cancel(); <-errc }()
	q, e = ttls()
	assert.Positive(t, q, "a registration after the last waiter left sets the expiry of the new waiters' keys")
	assert.Positive(t, e)
}

// waitForWaiters waits until the mutex's waiter set has n members.
func waitForWaiters(t *testing.T, c *distsync.Client, m *mutex.Mutex, n int64) {
	t.Helper()
	dstest.WaitWaiters(t, c, m.Key()+":waiters", n)
}

func TestReleaseWakesWaiterByNotification(t *testing.T) {
	// Not parallel: it reads the process-wide wake-up counters.
	c := dstest.Client(t)
	m := newMutex(t, c, dstest.Name(t))
	ctx := context.Background()
	// A long explicit lease: the waiter's timer would fire only after it.
	held, err := m.TryLock(ctx, 0, 10*time.Minute)
	require.NoError(t, err)

	stats := acquire.Counters()
	timerBefore, notifiedBefore := stats.Timer.Load(), stats.Notified.Load()+stats.Handed.Load()
	got := make(chan context.Context, 1)
	go func() {
		w, err := m.Lock(ctx)
		assert.NoError(t, err)
		got <- w
	}()
	waitForWaiters(t, c, m, 1)
	require.NoError(t, m.Unlock(held))
	var w context.Context
	select {
	case w = <-got:
	case <-time.After(time.Minute):
		t.Fatal("waiter was not woken by the release")
	}
	require.NoError(t, m.Unlock(w))
	assert.Equal(t, timerBefore, stats.Timer.Load(), "no wake-up by timer")
	assert.Greater(t, stats.Notified.Load()+stats.Handed.Load(), notifiedBefore, "woken, or handed the lock, by the release")
}

func TestReleaseBetweenTryAndSubscribe(t *testing.T) {
	// Not parallel: it reads the acquire loop's process-wide counters.
	c, f := dstest.FaultyClient(t, redistest.Shared(t), 0)
	m := newMutex(t, c, dstest.Name(t))
	ctx := context.Background()
	held, err := m.TryLock(ctx, 0, 10*time.Minute)
	require.NoError(t, err)

	// The waiter's first attempt is refused, and the lock released before
	// the refusal reaches the waiter, so before it subscribes.
	f.Inject(&dstest.Rule{Match: dstest.Script("Acquire or re-enter the reentrant lock"), Fault: dstest.Hook, Times: 1,
		Then: func() { assert.NoError(t, m.Unlock(held)) }})
	timerBefore := acquire.Counters().Timer.Load()

	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	w, err := m.Lock(wctx)
	require.NoError(t, err, "the waiter must see the release made before it subscribed")
	require.NoError(t, m.Unlock(w))
	assert.Equal(t, timerBefore, acquire.Counters().Timer.Load())
}

func TestNoKeysLeftAfterLastUnlock(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	name := dstest.Name(t)
	m := newMutex(t, c, name)
	ctx := context.Background()
	held, err := m.Lock(ctx)
	require.NoError(t, err)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, err := m.Lock(ctx)
			if assert.NoError(t, err) {
				assert.NoError(t, m.Unlock(w))
			}
		}()
	}
	waitForWaiters(t, c, m, 4)
	require.NoError(t, m.Unlock(held))
	wg.Wait()
	assert.Empty(t, dstest.Keys(t, c, m.Key()+"*"))
}

// Two goroutines of one owner wait for a lock another owner holds; one gives
// up. A waiter is an acquisition, not an owner: the one that gave up takes
// away only its own entry, and the holder's release wakes the other at once
// (the holder's ten-minute lease would otherwise bound its sleep).
func TestWaitersOfOneOwnerAreApart(t *testing.T) {
	t.Parallel()
	holder, c := dstest.Client(t), dstest.Client(t)
	name := dstest.Name(t)
	m := newMutex(t, c, name)
	held, err := newMutex(t, holder, name).TryLock(context.Background(), 0, 10*time.Minute)
	require.NoError(t, err)

	owner := distsync.NewOwner(context.Background())
	quitter, quit := context.WithCancel(owner) // the same owner
	defer quit()
	gaveUp := make(chan error, 1)
	go func() {
		_, err := m.Lock(quitter)
		gaveUp <- err
	}()
	waitForWaiters(t, c, m, 1)
	entries := waiterEntries(t, c, m)
	got := make(chan error, 1)
	go func() {
		lctx, err := m.Lock(owner)
		if err == nil {
			err = m.Unlock(lctx)
		}
		got <- err
	}()
	// The second has registered when the entries change (a new entry, or,
	// were waiters owners, the first's entry rewritten).
	require.Eventually(t, func() bool { return !maps.Equal(entries, waiterEntries(t, c, m)) }, 20*time.Second, time.Millisecond)

	quit()
	require.ErrorIs(t, <-gaveUp, context.Canceled)
	require.NoError(t, newMutex(t, holder, name).Unlock(held))
	select {
	case err := <-got:
		require.NoError(t, err, "the waiter left alone gets the lock")
	case <-time.After(20 * time.Second):
		t.Fatal("the waiter left alone was not woken by the release")
	}
	waitForWaiters(t, c, m, 0)
}

// waiterEntries returns the mutex's waiter entries (E in mx.lua).
func waiterEntries(t *testing.T, c *distsync.Client, m *mutex.Mutex) map[string]string {
	t.Helper()
	rc := c.Rueidis()
	e, err := rc.Do(context.Background(), rc.B().Hgetall().Key(m.Key()+":waiting").Build()).AsStrMap()
	require.NoError(t, err)
	return e
}

// Errors name the mutex as `mutex "<name>"`, which the handle makes when
// an error needs it rather than keeping it (a held lock keeps its Mutex).
func TestErrorsNameTheMutex(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	name := dstest.Name(t) + ` "quoted"`
	m := newMutex(t, c, name)
	err := m.Unlock(context.Background())
	require.ErrorIs(t, err, distsync.ErrNotHeld)
	assert.Equal(t, `mutex "`+dstest.Name(t)+` \"quoted\"": `+distsync.ErrNotHeld.Error(), err.Error())
}
