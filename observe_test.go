package distsync_test

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
)

// recorder is an Observer that records every call.
type recorder struct {
	mu sync.Mutex
	c  calls
}

// calls is what a recorder recorded, in order.
type calls struct {
	acquired []distsync.AcquireInfo
	released []distsync.ReleaseInfo
	renewed  []distsync.RenewInfo
	lost     []distsync.LostInfo
}

func (r *recorder) observer() *distsync.Observer {
	return &distsync.Observer{
		Acquired: func(_ context.Context, i distsync.AcquireInfo) {
			r.add(func(c *calls) { c.acquired = append(c.acquired, i) })
		},
		Released: func(_ context.Context, i distsync.ReleaseInfo) {
			r.add(func(c *calls) { c.released = append(c.released, i) })
		},
		Renewed: func(i distsync.RenewInfo) { r.add(func(c *calls) { c.renewed = append(c.renewed, i) }) },
		Lost:    func(i distsync.LostInfo) { r.add(func(c *calls) { c.lost = append(c.lost, i) }) },
	}
}

func (r *recorder) add(f func(*calls)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(&r.c)
}

// calls returns a copy of what was recorded.
func (r *recorder) calls() calls {
	r.mu.Lock()
	defer r.mu.Unlock()
	return calls{
		acquired: slices.Clone(r.c.acquired),
		released: slices.Clone(r.c.released),
		renewed:  slices.Clone(r.c.renewed),
		lost:     slices.Clone(r.c.lost),
	}
}

// waitFor waits (at most 10 s) until cond holds on what r recorded.
func (r *recorder) waitFor(t *testing.T, what string, cond func(calls) bool) {
	t.Helper()
	require.Eventually(t, func() bool { return cond(r.calls()) }, 10*time.Second, time.Millisecond, what)
}

// observed returns a Client observed by a new recorder; edit adjusts its options.
func observed(t *testing.T, edit ...func(*distsync.Options)) (*distsync.Client, *recorder) {
	r := &recorder{}
	c := dstest.Client(t, append([]func(*distsync.Options){func(o *distsync.Options) { o.Observer = r.observer() }}, edit...)...)
	return c, r
}

func TestObserverAcquiredUncontended(t *testing.T) {
	c, r := observed(t)
	m, err := c.Mutex(dstest.Name(t))
	require.NoError(t, err)
	before := time.Now()
	held, err := m.Lock(context.Background())
	require.NoError(t, err)
	token, err := m.Token(held)
	require.NoError(t, err)

	a := r.calls().acquired
	require.Len(t, a, 1, "one call of Acquired per Lock, made before Lock returns")
	got := a[0]
	assert.Equal(t, distsync.KindMutex, got.Kind)
	assert.Equal(t, m.Name(), got.Name)
	assert.False(t, got.Contended, "nobody held the lock")
	assert.Equal(t, token, got.Token)
	assert.NoError(t, got.Err)
	assert.False(t, got.Start.Before(before))
	assert.LessOrEqual(t, got.Wait, time.Since(before))
	require.NoError(t, m.Unlock(held))
}

func TestObserverAcquiredContended(t *testing.T) {
	c, r := observed(t)
	m, err := c.Mutex(dstest.Name(t))
	require.NoError(t, err)
	held, err := m.Lock(context.Background())
	require.NoError(t, err)

	// With no wait budget a held lock turns the caller away: contended, not granted.
	_, err = m.TryLock(context.Background(), 0, 0)
	require.ErrorIs(t, err, distsync.ErrNotAcquired)
	a := r.calls().acquired
	require.Len(t, a, 2)
	assert.True(t, a[1].Contended)
	assert.ErrorIs(t, a[1].Err, distsync.ErrNotAcquired)
	assert.Zero(t, a[1].Token)

	// A waiter granted after the holder's release waited: contended, with
	// a wait that covers the time until the release.
	type result struct {
		ctx context.Context
		err error
	}
	done := make(chan result, 1)
	go func() {
		ctx, err := m.Lock(context.Background())
		done <- result{ctx, err}
	}()
	dstest.WaitWaiters(t, c, m.Key()+":waiters", 1)
	waitedSince := time.Now()
	require.NoError(t, m.Unlock(held))
	res := <-done
	require.NoError(t, res.err)
	token, err := m.Token(res.ctx)
	require.NoError(t, err)
	a = r.calls().acquired
	require.Len(t, a, 3)
	assert.True(t, a[2].Contended)
	assert.NoError(t, a[2].Err)
	assert.Equal(t, token, a[2].Token)
	assert.Greater(t, a[2].Token, a[0].Token, "fencing tokens increase")
	assert.False(t, a[2].Start.Add(a[2].Wait).Before(waitedSince), "the wait lasted until the release")
	require.NoError(t, m.Unlock(res.ctx))
}

// A ForceLock that replaces a holder is reported contended and a take-over;
// one of a free lock is neither.
func TestObserverForceLockTakeOver(t *testing.T) {
	c, r := observed(t)
	dstest.TakeOver(t, c, dstest.Name(t))
	a := r.calls().acquired
	require.Len(t, a, 3)
	assert.False(t, a[0].TakeOver || a[0].Contended, "Lock of a free lock: %+v", a[0])
	assert.True(t, a[1].TakeOver, "ForceLock of a held lock is a take-over")
	assert.True(t, a[1].Contended, "ForceLock of a held lock found it held")
	assert.NoError(t, a[1].Err)
	assert.False(t, a[2].TakeOver || a[2].Contended, "ForceLock of a free lock: %+v", a[2])
}

func TestObserverReleasedWithHoldTime(t *testing.T) {
	c, r := observed(t)
	m, err := c.Mutex(dstest.Name(t))
	require.NoError(t, err)
	before := time.Now()
	held, err := m.Lock(context.Background())
	require.NoError(t, err)
	from := time.Now()
	time.Sleep(20 * time.Millisecond) // the hold being measured
	to := time.Now()
	require.NoError(t, m.Unlock(held))
	after := time.Now()
	require.ErrorIs(t, m.Unlock(held), distsync.ErrNotHeld)

	got := r.calls()
	require.Len(t, got.released, 1, "one Released per acquisition, however often Unlock is called")
	assert.Empty(t, got.lost)
	rel := got.released
	assert.Equal(t, distsync.KindMutex, rel[0].Kind)
	assert.Equal(t, m.Name(), rel[0].Name)
	assert.NoError(t, rel[0].Err)
	assert.False(t, rel[0].Auto)
	assert.GreaterOrEqual(t, rel[0].Held, to.Sub(from))
	assert.LessOrEqual(t, rel[0].Held, after.Sub(before))
}

func TestObserverReleasedWhenContextEnds(t *testing.T) {
	c, r := observed(t)
	m, err := c.Mutex(dstest.Name(t))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	held, err := m.Lock(ctx)
	require.NoError(t, err)
	cancel()
	r.waitFor(t, "Released after the context ended", func(c calls) bool { return len(c.released) == 1 })
	rel := r.calls().released[0]
	assert.True(t, rel.Auto)
	assert.NoError(t, rel.Err)
	require.NoError(t, m.Unlock(held), "the holder's Unlock reports the release distsync made")
	assert.Len(t, r.calls().released, 1)
}

func TestObserverLostLease(t *testing.T) {
	c, r := observed(t, func(o *distsync.Options) { o.Watchdog.Lease = 300 * time.Millisecond })
	m, err := c.Mutex(dstest.Name(t))
	require.NoError(t, err)
	held, err := m.Lock(context.Background())
	require.NoError(t, err)
	rc := c.Rueidis()
	require.NoError(t, rc.Do(context.Background(), rc.B().Del().Key(m.Key()).Build()).Error())

	r.waitFor(t, "Lost after the key was deleted", func(c calls) bool { return len(c.lost) == 1 })
	got := r.calls()
	lost, ren := got.lost, got.renewed
	assert.Empty(t, got.released)
	assert.Equal(t, distsync.KindMutex, lost[0].Kind)
	assert.Equal(t, m.Name(), lost[0].Name)
	assert.ErrorIs(t, lost[0].Cause, distsync.ErrLeaseLost)
	assert.Positive(t, lost[0].Held)
	assert.ErrorIs(t, context.Cause(held), distsync.ErrLeaseLost)
	last := ren[len(ren)-1]
	assert.Equal(t, distsync.RenewInfo{Leases: 1, Latency: last.Latency, Failed: 1, Lost: 1,
		ByKind: []distsync.RenewKind{{Kind: distsync.KindMutex, Leases: 1, Failed: 1}}}, last, "the batch that found the lease gone reports it before Lost")
	assert.ErrorIs(t, m.Unlock(held), distsync.ErrNotHeld)
	assert.Empty(t, r.calls().released, "an Unlock after the loss releases nothing")
}

func TestObserverRenewed(t *testing.T) {
	// A lease long enough that a renewal on a loaded machine (load 7-9 on
	// 2 cores) still answers within its interval: with 300 ms, 2 runs in
	// 15 saw a renewal time out there and counted it Failed.
	c, r := observed(t, func(o *distsync.Options) { o.Watchdog.Lease = 1500 * time.Millisecond })
	m1, err := c.Mutex(dstest.Name(t) + "-1")
	require.NoError(t, err)
	m2, err := c.Mutex(dstest.Name(t) + "-2")
	require.NoError(t, err)
	h1, err := m1.Lock(context.Background())
	require.NoError(t, err)
	h2, err := m2.Lock(context.Background())
	require.NoError(t, err)

	// Leases granted together fall due together and share a batch.
	r.waitFor(t, "a batch renewing both leases", func(c calls) bool {
		return slices.ContainsFunc(c.renewed, func(b distsync.RenewInfo) bool { return b.Leases == 2 })
	})
	got := r.calls()
	for _, b := range got.renewed {
		if b.Leases == 2 {
			assert.Equal(t, []distsync.RenewKind{{Kind: distsync.KindMutex, Leases: 2}}, b.ByKind, "the batch by kind")
		}
		assert.Zero(t, b.Failed, "%+v", b)
		assert.Zero(t, b.Lost, "%+v", b)
		assert.Positive(t, b.Latency, "%+v", b)
	}
	assert.Empty(t, got.lost)
	require.NoError(t, m1.Unlock(h1))
	require.NoError(t, m2.Unlock(h2))
}

func TestObserverLeaseExpiredAndClosed(t *testing.T) {
	c, r := observed(t)
	// Close leaves the lock held on the server: a new name each run.
	m, err := c.Mutex(dstest.Name(t) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36))
	require.NoError(t, err)
	expiring, err := m.TryLock(context.Background(), 0, 300*time.Millisecond) // longer than a slow server's first round trip
	require.NoError(t, err)
	<-expiring.Done()
	r.waitFor(t, "Lost when the explicit lease ran out", func(c calls) bool { return len(c.lost) == 1 })
	assert.ErrorIs(t, r.calls().lost[0].Cause, distsync.ErrLeaseExpired)

	_, err = m.Lock(context.Background())
	require.NoError(t, err)
	c.Close()
	lost := r.calls().lost
	require.Len(t, lost, 2, "Close ends the hold it abandons")
	assert.ErrorIs(t, lost[1].Cause, distsync.ErrClosed)
}

func TestObserverOtherKinds(t *testing.T) {
	c, r := observed(t)
	ctx := context.Background()
	name := dstest.Name(t)
	f, err := c.FairLock(name + "-fair")
	require.NoError(t, err)
	rw, err := c.RWLock(name + "-rw")
	require.NoError(t, err)
	for _, l := range []distsync.Locker{f, rw.Read(), rw.Write()} {
		held, err := l.TryLock(ctx, 0, 0)
		require.NoError(t, err)
		require.NoError(t, l.Unlock(held))
	}

	sem, err := c.Semaphore(name + "-sem")
	require.NoError(t, err)
	_, err = sem.TrySetPermits(ctx, 1)
	require.NoError(t, err)
	require.NoError(t, sem.Acquire(ctx, 1))
	require.ErrorIs(t, sem.TryAcquire(ctx, 1, 0), distsync.ErrNotAcquired)
	require.NoError(t, sem.Release(ctx, 1))

	ps, err := c.PermitSemaphore(name + "-permits")
	require.NoError(t, err)
	require.NoError(t, ps.SetPermits(ctx, 3))
	p, err := ps.Acquire(ctx)
	require.NoError(t, err)
	two, err := ps.TryAcquireN(ctx, 2, 0, 0)
	require.NoError(t, err)
	_, err = ps.TryAcquire(ctx, 0, 0)
	require.ErrorIs(t, err, distsync.ErrNotAcquired)
	require.NoError(t, ps.Release(ctx, p))
	require.NoError(t, ps.ReleaseID(ctx, two[0].ID()))
	require.NoError(t, ps.Release(ctx, two[1]))

	type event struct {
		kind       distsync.Kind
		side, name string
		granted    bool
	}
	rec := r.calls()
	a := rec.acquired
	var got []event
	for _, i := range a {
		got = append(got, event{i.Kind, i.Side, i.Name, i.Err == nil})
	}
	assert.Equal(t, []event{
		{distsync.KindFairLock, "", name + "-fair", true},
		{distsync.KindRWLock, distsync.SideRead, name + "-rw", true},
		{distsync.KindRWLock, distsync.SideWrite, name + "-rw", true},
		{distsync.KindSemaphore, "", name + "-sem", true},
		{distsync.KindSemaphore, "", name + "-sem", false},
		{distsync.KindPermitSemaphore, "", name + "-permits", true},
		{distsync.KindPermitSemaphore, "", name + "-permits", true}, // TryAcquireN: a permit is an acquisition
		{distsync.KindPermitSemaphore, "", name + "-permits", true},
		{distsync.KindPermitSemaphore, "", name + "-permits", false},
	}, got)
	assert.True(t, a[4].Contended)
	assert.True(t, a[8].Contended)
	got = nil
	for _, i := range rec.released {
		got = append(got, event{i.Kind, i.Side, i.Name, i.Err == nil})
	}
	assert.Equal(t, []event{
		{distsync.KindFairLock, "", name + "-fair", true},
		{distsync.KindRWLock, distsync.SideRead, name + "-rw", true},
		{distsync.KindRWLock, distsync.SideWrite, name + "-rw", true},
		{distsync.KindPermitSemaphore, "", name + "-permits", true},
		{distsync.KindPermitSemaphore, "", name + "-permits", true}, // ReleaseID
		{distsync.KindPermitSemaphore, "", name + "-permits", true},
	}, got, "a counting semaphore's permits belong to nobody: no Released")
}

func TestObserverPanicsAreRecovered(t *testing.T) {
	var logs dstest.SyncBuffer
	hooks := &distsync.Observer{
		Acquired: func(context.Context, distsync.AcquireInfo) { panic("acquired") },
		Released: func(context.Context, distsync.ReleaseInfo) { panic("released") },
		Renewed:  func(distsync.RenewInfo) { panic("renewed") },
		Lost:     func(distsync.LostInfo) { panic("lost") },
	}
	c := dstest.Client(t, func(o *distsync.Options) {
		o.Observer = hooks
		o.Watchdog.Lease = 300 * time.Millisecond
		o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	m, err := c.Mutex(dstest.Name(t))
	require.NoError(t, err)
	held, err := m.Lock(context.Background())
	require.NoError(t, err)
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "hook=Renewed") }, 10*time.Second, time.Millisecond)
	require.NoError(t, held.Err(), "the lease is still renewed")
	require.NoError(t, m.Unlock(held))
	locked, err := m.IsLocked(context.Background())
	require.NoError(t, err)
	assert.False(t, locked)

	held, err = m.Lock(context.Background())
	require.NoError(t, err)
	rc := c.Rueidis()
	require.NoError(t, rc.Do(context.Background(), rc.B().Del().Key(m.Key()).Build()).Error())
	<-held.Done()
	assert.ErrorIs(t, context.Cause(held), distsync.ErrLeaseLost)
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "hook=Lost") }, 10*time.Second, time.Millisecond)
	for _, hook := range []string{"Acquired", "Released"} {
		assert.Contains(t, logs.String(), "distsync: Observer hook panicked\" hook="+hook)
	}
}
