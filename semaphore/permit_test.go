package semaphore_test

import (
	"context"
	"fmt"
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

// setPermits makes a permit semaphore with n permits.
func setPermits(t *testing.T, c *distsync.Client, n int64) *semaphore.PermitSemaphore {
	t.Helper()
	s := newPermitSem(t, c, uniqueName(t))
	ok, err := s.TrySetPermits(context.Background(), n)
	require.NoError(t, err)
	require.True(t, ok)
	return s
}

// acquireLater runs s.Acquire(ctx) in a goroutine; the permit arrives on the
// channel (nil after a failure, which fails the test).
func acquireLater(t *testing.T, ctx context.Context, s *semaphore.PermitSemaphore) <-chan *semaphore.Permit {
	got := make(chan *semaphore.Permit, 1)
	go func() {
		p, err := s.Acquire(ctx)
		assert.NoError(t, err)
		got <- p
	}()
	return got
}

func held(t *testing.T, s *semaphore.PermitSemaphore) int64 {
	t.Helper()
	n, err := s.Held(context.Background())
	require.NoError(t, err)
	return n
}

func TestCrashedHolderPermitReturnsToWaiter(t *testing.T) {
	// Not parallel: it reads the process-wide wake-up counters.
	const lease = 500 * time.Millisecond
	holder := dstest.Client(t, func(o *distsync.Options) { o.Watchdog.Lease = lease })
	// The waiter's fallback sleep is half an hour: only the lease end the
	// server reported can wake it in time.
	waiter := dstest.Client(t, func(o *distsync.Options) { o.WaiterWindow = time.Hour })
	s := setPermits(t, holder, 1)
	ws := newPermitSem(t, waiter, s.Name())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	p, err := s.Acquire(ctx)
	require.NoError(t, err)
	got := acquireLater(t, ctx, ws)
	waitForWaiters(t, waiter, s.Key(), 1)
	timer := acquire.Counters().Timer.Load()

	// The holder crashes: its watchdog stops, nobody calls Release.
	dstest.Crash(holder)
	crashed := time.Now()
	q := <-got
	require.NotNil(t, q)
	t.Logf("the waiter got the permit %v after the crash (lease %v)", time.Since(crashed), lease)
	assert.Greater(t, acquire.Counters().Timer.Load(), timer, "woken by the lease end the server reported")
	assert.NotEqual(t, p.ID(), q.ID())
	assert.Equal(t, int64(1), held(t, ws))
	require.NoError(t, ws.Release(ctx, q))
	assert.Equal(t, int64(1), available(t, ws), "the crashed permit came back once")
}

func TestShorterLeaseWakesWaitersToLearnIt(t *testing.T) {
	t.Parallel()
	waiter := dstest.Client(t, func(o *distsync.Options) { o.WaiterWindow = time.Hour })
	c := dstest.Client(t)
	s := setPermits(t, c, 2)
	ws := newPermitSem(t, waiter, s.Name())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	long, err := s.TryAcquire(ctx, 0, time.Hour)
	require.NoError(t, err)
	// The waiter needs both permits; told: the earliest lease ends in an
	// hour.
	got := make(chan []*semaphore.Permit, 1)
	go func() {
		ps, err := ws.TryAcquireN(ctx, 2, distsync.Forever, 0)
		assert.NoError(t, err)
		got <- ps
	}()
	waitForWaiters(t, waiter, s.Key(), 1)

	// The permit left, too few for the waiter, is taken with a short
	// lease; the long one is released. The waiter must learn that the
	// short lease ends first: no release will tell it.
	short, err := s.TryAcquire(ctx, 0, 300*time.Millisecond)
	require.NoError(t, err)
	require.NoError(t, s.Release(ctx, long))
	ps := <-got
	require.Len(t, ps, 2, "the waiter gets the permit whose short lease ended")
	assert.ErrorIs(t, s.Release(ctx, short), distsync.ErrNotHeld)
	for _, p := range ps {
		require.NoError(t, ws.Release(ctx, p))
	}
}

func TestPermitDoubleRelease(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	s := setPermits(t, c, 2)
	ctx := context.Background()
	p, err := s.Acquire(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(1), available(t, s))

	// Another handle on the same semaphore may release it.
	require.NoError(t, newPermitSem(t, c, s.Name()).Release(ctx, p))
	assert.ErrorIs(t, context.Cause(p.Context()), distsync.ErrReleased)
	assert.ErrorIs(t, s.Release(ctx, p), distsync.ErrNotHeld)
	assert.Equal(t, int64(2), available(t, s), "a permit is returned once")

	other := setPermits(t, c, 1)
	q, err := other.Acquire(ctx)
	require.NoError(t, err)
	assert.ErrorIs(t, s.Release(ctx, q), distsync.ErrNotHeld, "a permit of another semaphore")
	assert.ErrorIs(t, s.Release(ctx, nil), distsync.ErrNotHeld)
	require.NoError(t, other.Release(ctx, q))
}

func TestExpiredPermit(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	s := setPermits(t, c, 1)
	ctx := context.Background()
	const lease = 200 * time.Millisecond
	p, err := s.TryAcquire(ctx, 0, lease)
	require.NoError(t, err)
	ttl, err := p.TTL(ctx)
	require.NoError(t, err)
	assert.True(t, ttl > 0 && ttl <= lease, "ttl %v", ttl)

	// Another acquisition gets it when the lease has ended on the server.
	q, err := s.TryAcquire(ctx, time.Minute, 0)
	require.NoError(t, err)
	<-p.Context().Done()
	assert.ErrorIs(t, context.Cause(p.Context()), distsync.ErrLeaseExpired)
	assert.Zero(t, c.Stats().Renewals, "an explicit lease is never renewed")
	_, err = p.TTL(ctx)
	assert.ErrorIs(t, err, distsync.ErrNotHeld)
	assert.ErrorIs(t, p.Extend(ctx, time.Minute), distsync.ErrNotHeld, "an ended lease is not revived")
	assert.ErrorIs(t, s.Release(ctx, p), distsync.ErrNotHeld)
	assert.Zero(t, available(t, s), "the expired permit is not returned twice")
	require.NoError(t, s.Release(ctx, q))
	assert.Equal(t, int64(1), available(t, s))
}

func TestExtend(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	s := setPermits(t, c, 2)
	ctx := context.Background()
	const lease = 200 * time.Millisecond
	p, err := s.TryAcquire(ctx, 0, lease)
	require.NoError(t, err)
	require.NoError(t, p.Extend(ctx, time.Minute))
	time.Sleep(2 * lease) // past the first lease
	require.NoError(t, p.Context().Err(), "the context's end moved with the lease")
	ttl, err := p.TTL(ctx)
	require.NoError(t, err)
	assert.Greater(t, ttl, 30*time.Second)
	assert.Equal(t, int64(1), held(t, s))

	assert.ErrorIs(t, p.Extend(ctx, 0), distsync.ErrInvalidArgument)
	w, err := s.Acquire(ctx)
	require.NoError(t, err)
	assert.ErrorIs(t, w.Extend(ctx, time.Minute), distsync.ErrInvalidArgument, "the watchdog renews it")
	require.NoError(t, s.Release(ctx, w))
	require.NoError(t, s.Release(ctx, p))
	assert.ErrorIs(t, p.Extend(ctx, time.Minute), distsync.ErrNotHeld)
	_, err = p.TTL(ctx)
	assert.ErrorIs(t, err, distsync.ErrNotHeld)
}

func TestWatchdogKeepsPermit(t *testing.T) {
	t.Parallel()
	redistest.RequireReal(t, redistest.Shared(t), redistest.RenewalsOnTime)
	const lease = 900 * time.Millisecond
	c := dstest.Client(t, func(o *distsync.Options) { o.Watchdog.Lease = lease })
	s := setPermits(t, c, 1)
	ctx := context.Background()
	p, err := s.Acquire(ctx)
	require.NoError(t, err)
	// Let more than three leases pass: only renewals keep the permit.
	time.Sleep(4 * lease)
	require.NoError(t, p.Context().Err(), "the permit must not be lost")
	assert.Equal(t, int64(1), held(t, s))
	assert.GreaterOrEqual(t, c.Stats().Renewals, int64(4))
	_, err = s.TryAcquire(ctx, 0, 0)
	assert.ErrorIs(t, err, distsync.ErrNotAcquired)
	require.NoError(t, s.Release(ctx, p))
	assert.Zero(t, c.Stats().HeldLeases, "a released permit is not renewed")
}

func TestLostPermitCancelsHolder(t *testing.T) {
	t.Parallel()
	const lease = 3 * time.Second
	c := dstest.Client(t, func(o *distsync.Options) { o.Watchdog.Lease = lease })
	s := setPermits(t, c, 1)
	ctx := context.Background()
	p, err := s.Acquire(ctx)
	require.NoError(t, err)
	rc := c.Rueidis()
	require.NoError(t, rc.Do(ctx, rc.B().Zrem().Key(s.Key()+":permits").Member(p.ID()).Build()).Error())
	select {
	case <-p.Context().Done():
	case <-time.After(lease/3 + 5*time.Second):
		t.Fatal("holder's context not cancelled after the next renewal")
	}
	assert.ErrorIs(t, context.Cause(p.Context()), distsync.ErrLeaseLost)
	assert.ErrorIs(t, s.Release(ctx, p), distsync.ErrNotHeld)
}

func TestSetPermitsWhileHeld(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	s := setPermits(t, c, 5)
	ctx := context.Background()
	var ps []*semaphore.Permit
	for range 3 {
		p, err := s.Acquire(ctx)
		require.NoError(t, err)
		ps = append(ps, p)
	}
	require.NoError(t, s.SetPermits(ctx, 2))
	assert.Equal(t, int64(-1), available(t, s), "available + held = 2")
	assert.Equal(t, int64(3), held(t, s))
	_, err := s.TryAcquire(ctx, 0, 0)
	assert.ErrorIs(t, err, distsync.ErrNotAcquired)
	for i, want := range []int64{0, 1, 2} {
		require.NoError(t, s.Release(ctx, ps[i]))
		assert.Equal(t, want, available(t, s))
	}

	// Raising the total wakes a waiter.
	p, err := s.Acquire(ctx)
	require.NoError(t, err)
	q, err := s.Acquire(ctx)
	require.NoError(t, err)
	got := acquireLater(t, ctx, s)
	waitForWaiters(t, c, s.Key(), 1)
	require.NoError(t, s.SetPermits(ctx, 3))
	r := <-got
	assert.Equal(t, int64(3), held(t, s))
	for _, x := range []*semaphore.Permit{p, q, r} {
		require.NoError(t, s.Release(ctx, x))
	}
	assert.Equal(t, int64(3), available(t, s))
	ok, err := s.TrySetPermits(ctx, 10)
	require.NoError(t, err)
	assert.False(t, ok)
}

func TestPermitReleaseWakesWaiterByNotification(t *testing.T) {
	// Not parallel: it reads the process-wide wake-up counters.
	c := dstest.Client(t)
	s := setPermits(t, c, 1)
	ctx := context.Background()
	// A long explicit lease: the waiter's timer would fire only after it.
	p, err := s.TryAcquire(ctx, 0, 10*time.Minute)
	require.NoError(t, err)
	stats := acquire.Counters()
	timer, handed := stats.Timer.Load(), stats.Handed.Load()
	got := acquireLater(t, ctx, s)
	waitForWaiters(t, c, s.Key(), 1)
	attempts := stats.Attempts.Load()
	require.NoError(t, s.Release(ctx, p))
	q := <-got
	assert.Equal(t, attempts, stats.Attempts.Load(), "no attempt after the release")
	require.NoError(t, s.Release(ctx, q))
	assert.Equal(t, timer, stats.Timer.Load(), "no wake-up by timer")
	// The release grants the waiter the permit: it holds when the message
	// arrives, without another attempt.
	assert.Equal(t, handed+1, stats.Handed.Load(), "the grant taken from the message")
}

func TestPermitBadInput(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	s := newPermitSem(t, c, uniqueName(t))
	ctx := context.Background()
	_, err := s.TryAcquire(ctx, 0, 0)
	assert.ErrorIs(t, err, distsync.ErrNotAcquired, "never set: no permits")
	_, err = s.TryAcquire(ctx, -time.Second, 0)
	assert.ErrorIs(t, err, distsync.ErrInvalidArgument)
	_, err = s.TryAcquire(ctx, 0, -time.Second)
	assert.ErrorIs(t, err, distsync.ErrInvalidArgument)
	assert.ErrorIs(t, s.AddPermits(ctx, semaphore.MaxPermits+1), distsync.ErrInvalidArgument)
}

// Redisson's acquire(permits, leaseTime): n permits at once, all or none,
// each with its own id and lease; a waiter needing n waits until n are
// available.
func TestAcquireN(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	s := newPermitSem(t, c, dstest.Name(t))
	ctx := context.Background()
	_, err := s.TrySetPermits(ctx, 3)
	require.NoError(t, err)
	ps, err := s.TryAcquireN(ctx, 2, 0, time.Minute)
	require.NoError(t, err)
	require.Len(t, ps, 2)
	assert.NotEqual(t, ps[0].ID(), ps[1].ID())
	for _, p := range ps {
		ttl, err := p.TTL(ctx)
		require.NoError(t, err)
		assert.Greater(t, ttl, 50*time.Second, "each has the lease")
	}
	_, err = s.TryAcquireN(ctx, 2, 0, 0)
	require.ErrorIs(t, err, distsync.ErrNotAcquired, "one left: all or none")
	assert.Equal(t, int64(2), held(t, s), "none taken by the refused call")

	got := make(chan []*semaphore.Permit, 1)
	go func() {
		ps, err := s.TryAcquireN(ctx, 2, 10*time.Second, 0)
		assert.NoError(t, err)
		got <- ps
	}()
	waitForWaiters(t, c, s.Key(), 1)
	require.NoError(t, s.Release(ctx, ps[0]))
	more := <-got
	require.Len(t, more, 2)
	for _, p := range append(more, ps[1]) {
		require.NoError(t, s.Release(ctx, p))
	}
	assert.Zero(t, held(t, s))
	for _, n := range []int64{0, -1, semaphore.MaxPermitsPerCall + 1} {
		_, err := s.TryAcquireN(ctx, n, 0, 0)
		assert.ErrorIs(t, err, distsync.ErrInvalidArgument, "n=%d", n)
	}
}

// Redisson's release(permitId): any Client releases a permit by its id; the
// holder on another Client learns at its next renewal.
func TestReleaseID(t *testing.T) {
	t.Parallel()
	holder := dstest.Client(t, func(o *distsync.Options) { o.Watchdog.Lease = 300 * time.Millisecond })
	other := dstest.Client(t)
	name := dstest.Name(t)
	s := newPermitSem(t, holder, name)
	ctx := context.Background()
	_, err := s.TrySetPermits(ctx, 1)
	require.NoError(t, err)
	p, err := s.Acquire(ctx)
	require.NoError(t, err)
	so := newPermitSem(t, other, name)
	require.NoError(t, so.ReleaseID(ctx, p.ID()))
	assert.ErrorIs(t, so.ReleaseID(ctx, p.ID()), distsync.ErrNotHeld, "released once")
	<-p.Context().Done()
	assert.ErrorIs(t, context.Cause(p.Context()), distsync.ErrLeaseLost)
	assert.ErrorIs(t, s.Release(ctx, p), distsync.ErrNotHeld)
	avail, err := so.Available(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(1), avail)

	// On the holder's own Client, its context ends at once.
	p, err = s.Acquire(ctx)
	require.NoError(t, err)
	require.NoError(t, s.ReleaseID(ctx, p.ID()))
	assert.ErrorIs(t, context.Cause(p.Context()), distsync.ErrReleased)
}

// getPermits and setPermits: the total is available plus held; SetPermits
// sets it whether or not it was set, on both semaphores.
func TestPermitsAndSetPermits(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	ctx := context.Background()
	ps := newPermitSem(t, c, dstest.Name(t)+"-permit")
	require.NoError(t, ps.SetPermits(ctx, 4))
	p, err := ps.Acquire(ctx)
	require.NoError(t, err)
	total, err := ps.Permits(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(4), total)
	require.NoError(t, ps.SetPermits(ctx, 2))
	avail, err := ps.Available(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(1), avail, "2 less the one held")
	require.NoError(t, ps.Release(ctx, p))

	s := newSem(t, c, dstest.Name(t)+"-counting")
	require.NoError(t, s.SetPermits(ctx, 5))
	require.NoError(t, s.Acquire(ctx, 2))
	require.NoError(t, s.SetPermits(ctx, 7))
	avail, err = s.Available(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(7), avail, "a counting semaphore's permits are not held: available is set")
	assert.ErrorIs(t, s.SetPermits(ctx, -1), distsync.ErrInvalidArgument)
}

// permitQueue is a permit semaphore of one permit, held by holder with a
// lease of an hour, and queued behind it, oldest first, waiters of the
// Client dead (for an hour each too), then a live waiter of next, whose
// permit arrives on got.
type permitQueue struct {
	ctx          context.Context
	holder, dead *distsync.Client
	others       []*distsync.Client         // more dead waiters' Clients, if any
	s, sn        *semaphore.PermitSemaphore // of holder, of next
	p            *semaphore.Permit
	got          <-chan *semaphore.Permit
	ghosts       chan error // the dead waiters' results, one room each
}

// queueBehind makes a permitQueue with n dead waiters, every Client's
// hand-off lease hl; with clients above 1, waiter i waits in the i %
// clients-th of dead and others.
func queueBehind(t *testing.T, hl time.Duration, n, clients int) permitQueue {
	t.Helper()
	holder, dead, next := dstest.Client(t), dstest.Client(t), dstest.Client(t)
	s := setPermits(t, holder, 1)
	sds, sn := []*semaphore.PermitSemaphore{newPermitSem(t, dead, s.Name())}, newPermitSem(t, next, s.Name())
	others := make([]*distsync.Client, clients-1)
	for i := range others {
		others[i] = dstest.Client(t)
		sds = append(sds, newPermitSem(t, others[i], s.Name()))
	}
	for _, x := range append([]*semaphore.PermitSemaphore{s, sn}, sds...) {
		semaphore.Tune(x, hl)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	p, err := s.TryAcquire(ctx, 0, time.Hour)
	require.NoError(t, err)
	q := permitQueue{ctx: ctx, holder: holder, dead: dead, others: others, s: s, sn: sn, p: p, ghosts: make(chan error, n)}
	for i := range n {
		go func() {
			_, err := sds[i%clients].TryAcquire(ctx, distsync.Forever, time.Hour)
			q.ghosts <- err
		}()
		waitForWaiters(t, holder, s.Key(), int64(i+1)) // queued in this order
	}
	q.got = acquireLater(t, ctx, sn)
	waitForWaiters(t, holder, s.Key(), int64(n+1))
	return q
}

// crash kills the dead waiters' Clients without their leaving the queue
// (dstest.Crash), and waits until the server has closed their
// subscriptions.
func (q permitQueue) crash(t *testing.T) {
	t.Helper()
	dead := append([]*distsync.Client{q.dead}, q.others...)
	for _, c := range dead {
		dstest.Crash(c)
	}
	for range cap(q.ghosts) {
		require.ErrorIs(t, <-q.ghosts, distsync.ErrClosed)
	}
	for _, c := range dead {
		dstest.WaitUnsubscribed(t, q.holder, channelOf(q.s, c))
	}
}

// A release grants the oldest waiter its permit; a grant to a waiter that
// vanished where the server cannot tell (its process stopped with its
// connections open: dstest.StandIn) lapses with the hand-off lease, and
// the waiter after it, nudged by the grant, holds within that bound:
// without the nudge it would sleep until the holder's lease (an hour) ends.
func TestGrantToVanishedPermitWaiterMovesOnWithinHandoffLease(t *testing.T) {
	t.Parallel()
	q := queueBehind(t, time.Second, 1, 1)
	q.crash(t)                                          // the oldest waiter vanishes
	dstest.StandIn(t, q.holder, channelOf(q.s, q.dead)) // and the server cannot tell

	start := time.Now()
	require.NoError(t, q.s.Release(q.ctx, q.p))
	var p *semaphore.Permit
	select {
	case p = <-q.got:
	case <-time.After(10 * time.Second): // the hand-off lease (1 s), widened for a loaded machine
		t.Fatal("the next waiter does not hold within the hand-off lease")
	}
	require.NotNil(t, p)
	t.Logf("the next waiter held %v after the release", time.Since(start).Round(time.Millisecond))
	assert.Equal(t, int64(1), held(t, q.sn))
	require.NoError(t, q.sn.Release(q.ctx, p))
	assert.Equal(t, int64(1), available(t, q.sn), "the lapsed grant came back once")
}

// Two waiters at the head of the queue that vanished where the server
// cannot tell (their process stopped with both queued and its connections
// open: dstest.StandIn) delay the live waiter behind them by about twice the
// hand-off lease: the release grants the first its permit and nudges the
// two after it, so the live third tries again within the hand-off lease,
// finds the first grant lapsed (its attempt grants the permit to the
// second, which lapses too) and holds a hand-off lease later. Nudging only
// the second, the third slept until the retry time of its refusal: the end
// of the holder's lease (an hour).
func TestTwoVanishedPermitWaitersDelayNextByHandoffLease(t *testing.T) {
	t.Parallel()
	const hl = 300 * time.Millisecond
	q := queueBehind(t, hl, 2, 1)
	q.crash(t)                                          // both die without leaving the queue
	dstest.StandIn(t, q.holder, channelOf(q.s, q.dead)) // and the server cannot tell

	liveHoldsAfterTwoHandoffs(t, q.ctx, q.s, q.sn, q.p, q.got, hl)
}

// liveHoldsAfterTwoHandoffs releases p, the only permit of s, held ahead
// of two queued waiters that vanished and a live one of sn, whose permit
// arrives on got, and checks that the live waiter holds within about twice
// the hand-off lease hl, and that the lapsed grants came back once.
func liveHoldsAfterTwoHandoffs(t *testing.T, ctx context.Context, s, sn *semaphore.PermitSemaphore, p *semaphore.Permit, got <-chan *semaphore.Permit, hl time.Duration) {
	t.Helper()
	start := time.Now()
	require.NoError(t, s.Release(ctx, p))
	q := <-got
	require.NotNil(t, q)
	took := time.Since(start)
	t.Logf("the live waiter held %v after the release", took.Round(time.Millisecond))
	// The bound is about twice the hand-off lease; the margin covers a
	// loaded machine, and is a fraction of the delay before (the retry
	// time of the live waiter's refusal: the end of the holder's lease).
	assert.Less(t, took, 2*hl+3*time.Second, "the live waiter holds within twice the hand-off lease")
	assert.Equal(t, int64(1), held(t, sn))
	require.NoError(t, sn.Release(ctx, q))
	assert.Equal(t, int64(1), available(t, sn), "the lapsed grants came back once")
}

// channelOf is the channel of s where releases tell the waiters of c.
func channelOf(s *semaphore.PermitSemaphore, c *distsync.Client) string {
	return s.Key() + ":ch:" + c.ID()
}

// Waiters whose Client no longer listens on its channel (here its process
// died: its connections closed, and the server closed its subscription)
// are passed over by a release and forgotten, two in a row, and the live
// waiter behind them is granted the permit by that release. With the
// hand-off lease and the dead waiters' leases of an hour, it would
// otherwise wait for an hour. Seventy: the release forgets every waiter of
// the dead Client at once (sem_pforget), where one a turn would stop after
// 64 turns and leave the live one to its own timer (the holder's lease).
// Seventy of seventy Clients that died (processes that died at once): from
// the second Client found dead on, the waiters of every Client that no
// longer listens go at once (sem_pforget, ds_deaf), where one Client a turn
// would stop in the same way. Seventy whose registrations ended while the server still counts their
// Client as listening (a process that stopped with its connections open:
// dstest.StandIn; their registrations made to end as time would end them):
// from the second on, every waiter whose registration ended goes at once
// (sem_pgrant), where one a turn would stop after 64 in the same way.
func TestDeadPermitWaitersArePassedOver(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		dead    int
		clients int  // the dead waiters' Clients
		ended   bool // their registrations ended, their Client seems to listen
	}{{2, 1, false}, {70, 1, false}, {70, 70, false}, {70, 1, true}} {
		name := fmt.Sprint(tc.dead)
		if tc.clients > 1 {
			name += fmt.Sprintf(" of %d Clients", tc.clients)
		}
		if tc.ended {
			name += " ended"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dead := tc.dead
			q := queueBehind(t, time.Hour, dead, tc.clients)
			require.Equal(t, int64(1), dstest.Listeners(t, q.holder, channelOf(q.s, q.dead)), "the dead waiters' Client listened")
			rc := q.holder.Rueidis()
			ghosts, err := rc.Do(q.ctx, rc.B().Zrange().Key(q.s.Key()+":waiters").Min("0").Max(fmt.Sprint(dead-1)).Build()).AsStrSlice()
			require.NoError(t, err)
			q.crash(t)
			if tc.ended {
				dstest.StandIn(t, q.holder, channelOf(q.s, q.dead)) // the server cannot tell
				dstest.EndRegistrations(t, q.holder, q.s.Key()+":pneeds", ghosts)
			}
			waitForWaiters(t, q.holder, q.s.Key(), int64(dead+1)) // the dead waiters are still queued

			require.NoError(t, q.s.Release(q.ctx, q.p))
			var p *semaphore.Permit
			select {
			case p = <-q.got:
			case <-time.After(20 * time.Second):
				t.Fatal("the live waiter waits behind the dead ones")
			}
			require.NotNil(t, p)
			assert.Equal(t, int64(1), held(t, q.sn), "the live waiter holds the only permit")
			waitForWaiters(t, q.holder, q.s.Key(), 0) // the dead waiters are forgotten
			require.NoError(t, q.sn.Release(q.ctx, p))
			assert.Equal(t, int64(1), available(t, q.sn), "the permit came back once")
		})
	}
}

// A waiter that spins (WithSpin) listens on no channel, and says so: a
// release grants it its permit as it grants a waiter that listens, and it
// finds the grant when it polls. It is not passed over for the waiter
// behind it, whose Client listens.
func TestSpinningPermitWaiterIsGranted(t *testing.T) {
	t.Parallel()
	holder, spinner, next := dstest.Client(t), dstest.Client(t), dstest.Client(t)
	s := setPermits(t, holder, 1)
	ss, sn := newPermitSem(t, spinner, s.Name()), newPermitSem(t, next, s.Name())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := s.TryAcquire(ctx, 0, time.Hour)
	require.NoError(t, err)
	spun := acquireLater(t, distsync.WithSpin(ctx, distsync.Spin{Min: time.Millisecond, Max: 5 * time.Millisecond}), ss)
	waitForWaiters(t, holder, s.Key(), 1)
	require.Zero(t, dstest.Listeners(t, holder, channelOf(s, spinner)), "a spinning waiter's Client listens on no channel")
	gotNext := acquireLater(t, ctx, sn)
	waitForWaiters(t, holder, s.Key(), 2)

	require.NoError(t, s.Release(ctx, p))
	var q *semaphore.Permit
	select {
	case q = <-spun:
	case <-gotNext:
		t.Fatal("the waiter behind the spinning one was granted the permit first")
	}
	require.NotNil(t, q)
	assert.Equal(t, int64(1), held(t, ss), "the spinning waiter holds")
	waitForWaiters(t, holder, s.Key(), 1) // the waiter behind it still waits
	require.NoError(t, ss.Release(ctx, q))
	q = <-gotNext
	require.NotNil(t, q)
	require.NoError(t, sn.Release(ctx, q))
}

// A release that finds a waiter's Client no longer listening forgets that
// Client's waiters that listen (sem_pforget), not one that spins: that one
// says it listens on no channel, so the server cannot tell whether it is
// gone, and it is granted its permit as any spinner is (here entries of no
// acquisition, of a Client that never subscribed, queued ahead of a live
// waiter: one that listens, one that spins, one that listens).
func TestSpinningPermitWaiterOfDeadClientIsKept(t *testing.T) {
	t.Parallel()
	holder, next := dstest.Client(t), dstest.Client(t)
	s := setPermits(t, holder, 1)
	sn := newPermitSem(t, next, s.Name())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := s.TryAcquire(ctx, 0, time.Hour)
	require.NoError(t, err)
	got := acquireLater(t, ctx, sn)
	waitForWaiters(t, holder, s.Key(), 1)
	rc := holder.Rueidis()
	live, err := rc.Do(ctx, rc.B().Zrange().Key(s.Key()+":waiters").Min("0").Max("-1").Withscores().Build()).AsZScores()
	require.NoError(t, err)
	require.Len(t, live, 1)
	sec := dstest.ServerSecond(t, holder)
	for i, listens := range []string{"l", "", "l"} { // older than the live waiter
		id := fmt.Sprintf("gone:waiter%d", i)
		entry := fmt.Sprintf("%d 30000%s gone:permit%d", sec*1000+time.Minute.Milliseconds(), listens, i)
		require.NoError(t, rc.Do(ctx, rc.B().Zadd().Key(s.Key()+":waiters").ScoreMember().ScoreMember(live[0].Score-float64(3-i), id).Build()).Error())
		require.NoError(t, rc.Do(ctx, rc.B().Hset().Key(s.Key()+":pneeds").FieldValue().FieldValue(id, entry).Build()).Error())
	}
	waitForWaiters(t, holder, s.Key(), 4)

	require.NoError(t, s.Release(ctx, p))
	queued, err := rc.Do(ctx, rc.B().Zrange().Key(s.Key()+":waiters").Min("0").Max("-1").Build()).AsStrSlice()
	require.NoError(t, err)
	assert.Equal(t, []string{live[0].Member}, queued, "the waiters that listened are forgotten, the spinner granted")
	entries, err := rc.Do(ctx, rc.B().Hkeys().Key(s.Key()+":pneeds").Build()).AsStrSlice()
	require.NoError(t, err)
	assert.Equal(t, []string{live[0].Member}, entries, "only the live waiter's entry is left")
	_, err = rc.Do(ctx, rc.B().Zscore().Key(s.Key()+":permits").Member("gone:permit1").Build()).AsFloat64()
	require.NoError(t, err, "the spinner holds")

	require.NoError(t, s.ReleaseID(ctx, "gone:permit1"))
	q := <-got
	require.NotNil(t, q)
	assert.Equal(t, int64(1), held(t, sn), "the live waiter holds the only permit")
	require.NoError(t, sn.Release(ctx, q))
	assert.Equal(t, int64(1), available(t, sn), "the permit came back once")
}

// Two waiters that vanished ahead of a live one of the same Client (here
// entries of no acquisition, as a paused goroutine's would stay) delay it
// by about twice the hand-off lease too: the release's one message to that
// Client names both waiters after the grantee ('<second>,<third>'), with
// no message of the third's own.
func TestVanishedPermitWaitersOfOneClientDelayNextByHandoffLease(t *testing.T) {
	t.Parallel()
	const hl = 300 * time.Millisecond
	holder, next := dstest.Client(t), dstest.Client(t)
	s := setPermits(t, holder, 1)
	sn := newPermitSem(t, next, s.Name())
	semaphore.Tune(s, hl)
	semaphore.Tune(sn, hl)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := s.Acquire(ctx)
	require.NoError(t, err)
	got := acquireLater(t, ctx, sn)
	waitForWaiters(t, holder, s.Key(), 1)
	rc := holder.Rueidis()
	sec := dstest.ServerSecond(t, holder)
	for i, age := range []time.Duration{2 * time.Second, time.Second} { // older than the live waiter
		id := fmt.Sprintf("%s:ghost%d", next.ID(), i)
		entry := fmt.Sprintf("%d 30000 %s:permit%d", sec*1000+time.Minute.Milliseconds(), next.ID(), i)
		require.NoError(t, rc.Do(ctx, rc.B().Zadd().Key(s.Key()+":waiters").ScoreMember().ScoreMember(float64(sec*1000000-age.Microseconds()), id).Build()).Error())
		require.NoError(t, rc.Do(ctx, rc.B().Hset().Key(s.Key()+":pneeds").FieldValue().FieldValue(id, entry).Build()).Error())
	}
	waitForWaiters(t, holder, s.Key(), 3)

	liveHoldsAfterTwoHandoffs(t, ctx, s, sn, p, got, hl)
}

// Queued waiters are granted in the order they queued.
func TestPermitWaitersGrantedInOrder(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t, func(o *distsync.Options) { o.WaiterWindow = time.Hour })
	s := setPermits(t, c, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := s.Acquire(ctx)
	require.NoError(t, err)
	const waiters = 6
	order := make(chan int, waiters)
	for i := range waiters {
		go func() {
			q, err := s.Acquire(ctx)
			if assert.NoError(t, err) {
				order <- i
				assert.NoError(t, s.Release(ctx, q))
			}
		}()
		waitForWaiters(t, c, s.Key(), int64(i+1)) // queued one after the other
	}
	require.NoError(t, s.Release(ctx, p))
	for i := range waiters {
		assert.Equal(t, i, <-order, "granted in the order they queued")
	}
}

// A release while the count was set below the permits held grants nobody:
// the permit goes back to a count still short of one.
func TestReleaseBelowCountGrantsNobody(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	s := setPermits(t, c, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := s.Acquire(ctx)
	require.NoError(t, err)
	got := make(chan error, 1)
	go func() {
		_, err := s.TryAcquire(ctx, 2*time.Second, 0)
		got <- err
	}()
	waitForWaiters(t, c, s.Key(), 1)
	require.NoError(t, s.SetPermits(ctx, 0)) // 1 held: -1 available
	require.NoError(t, s.Release(ctx, p))
	assert.Zero(t, available(t, s))
	assert.ErrorIs(t, <-got, distsync.ErrNotAcquired, "no permit to grant")
	assert.Zero(t, held(t, s))
}

// A grant that lands while the waiter's Client closes is given back by
// Close, not left to lapse with the hand-off lease: whether the waiter took
// it first (Close gives back its holds), was told it gave up first (its
// leave gives back the permit), or took it as Close began.
func TestGrantDuringCloseIsGivenBack(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	s := setPermits(t, c, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range 20 {
		w := dstest.Client(t)
		ws := newPermitSem(t, w, s.Name())
		p, err := s.Acquire(ctx)
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() {
			_, err := ws.Acquire(ctx)
			done <- err
		}()
		waitForWaiters(t, c, s.Key(), 1)
		released := make(chan error, 1)
		go func() { released <- s.Release(ctx, p) }()
		time.Sleep(time.Duration(i%5) * 100 * time.Microsecond) // vary the interleaving
		w.Close()
		require.NoError(t, <-released)
		if err := <-done; err != nil {
			require.ErrorIs(t, err, distsync.ErrClosed, "round %d", i)
		}
		// Within less than the hand-off lease (1 s), which would return
		// a grant nobody gave back too.
		deadline := time.Now().Add(500 * time.Millisecond)
		for available(t, s) != 1 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		require.Equal(t, int64(1), available(t, s), "round %d: the permit came back", i)
		require.Zero(t, held(t, s), "round %d", i)
	}
}
