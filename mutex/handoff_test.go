package mutex_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
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

// The tests of this file read the process-wide counters of the acquire loop:
// they are not parallel.

// Hand-off settings the tests give their Clients: a release by a Client
// tuned to barging never hands the lock to a waiter (its oldest waiter is
// always young); tuned to starving it always does.
const (
	barging  = time.Hour
	starving = 0
	keep     = -1 // the Client's setting
)

// tune sets the hand-off settings, StarveAfter and HandoffLease, of the
// Clients of ms (mutex.Tune).
func tune(starveAfter, handoffLease time.Duration, ms ...*mutex.Mutex) {
	for _, m := range ms {
		mutex.Tune(m, starveAfter, handoffLease)
	}
}

// waiting starts m.Lock(ctx) in a goroutine, waits until the waiter set has
// n members, and returns where the acquisition's context will arrive.
func waiting(t *testing.T, ctx context.Context, c *distsync.Client, m *mutex.Mutex, n int64) <-chan context.Context {
	t.Helper()
	got := make(chan context.Context, 1)
	go func() {
		w, err := m.Lock(ctx)
		assert.NoError(t, err)
		got <- w
	}()
	waitForWaiters(t, c, m, n)
	return got
}

// backdate makes waiter owner of m look registered age ago on the server,
// so that its place and its age do not depend on the clock's resolution.
func backdate(t *testing.T, c *distsync.Client, m *mutex.Mutex, owner string, age time.Duration) {
	t.Helper()
	rc := c.Rueidis()
	ctx := context.Background()
	sec := dstest.ServerSecond(t, c)
	score := float64(sec*1000000 - age.Microseconds())
	n, err := rc.Do(ctx, rc.B().Zadd().Key(m.Key()+":waiters").Xx().Ch().ScoreMember().ScoreMember(score, owner).Build()).AsInt64()
	require.NoError(t, err)
	require.Equal(t, int64(1), n, "waiter %s registered", owner)
}

// waiters returns m's waiters, oldest first.
func waiters(t *testing.T, c *distsync.Client, m *mutex.Mutex) []string {
	t.Helper()
	rc := c.Rueidis()
	ids, err := rc.Do(context.Background(), rc.B().Zrange().Key(m.Key()+":waiters").Min("0").Max("-1").Build()).AsStrSlice()
	require.NoError(t, err)
	return ids
}

// channelOf is the channel of m where releases tell the waiters of
// waiter's Client (mx.lua).
func channelOf(m *mutex.Mutex, waiter string) string {
	cid, _, _ := strings.Cut(waiter, ":")
	return m.Key() + ":ch:" + cid
}

// listeners returns how many connections listen on the channel of m where
// releases tell the waiters of waiter's Client.
func listeners(t *testing.T, c *distsync.Client, m *mutex.Mutex, waiter string) int64 {
	t.Helper()
	return dstest.Listeners(t, c, channelOf(m, waiter))
}

// gone waits until the server has closed the subscriptions of waiter's
// Client on m's channel, as it does when that Client's process dies
// (dstest.Crash): its connections closed.
func gone(t *testing.T, c *distsync.Client, m *mutex.Mutex, waiter string) {
	t.Helper()
	dstest.WaitUnsubscribed(t, c, channelOf(m, waiter))
}

// stillListening stands for waiter's Client, crashed (dstest.Crash), as a
// process that stopped with its connections open (dstest.StandIn): a
// release treats its waiters as live.
func stillListening(t *testing.T, c *distsync.Client, m *mutex.Mutex, waiter string) {
	t.Helper()
	dstest.StandIn(t, c, channelOf(m, waiter))
}

type counts struct{ attempts, notified, handed, timer int64 }

func snapshot() counts {
	s := acquire.Counters()
	return counts{s.Attempts.Load(), s.Notified.Load(), s.Handed.Load(), s.Timer.Load()}
}

func (a counts) since(b counts) counts {
	return counts{a.attempts - b.attempts, a.notified - b.notified, a.handed - b.handed, a.timer - b.timer}
}

func wakes(cs []*distsync.Client) int64 {
	var n int64
	for _, c := range cs {
		n += c.Stats().NotifierWakes
	}
	return n
}

// Three waiters on three Clients (three processes): each release wakes one
// of them across all processes, the oldest, and it takes the lock with one
// attempt; nobody else attempts.
func TestReleaseWakesOneWaiterAcrossProcesses(t *testing.T) {
	holder := dstest.Client(t)
	cs := []*distsync.Client{dstest.Client(t), dstest.Client(t), dstest.Client(t)}
	name := dstest.Name(t)
	m := newMutex(t, holder, name)
	var ms []*mutex.Mutex
	for _, c := range cs {
		ms = append(ms, newMutex(t, c, name))
	}
	tune(barging, keep, append(ms, m)...)
	ctx := context.Background()
	held, err := m.Lock(ctx)
	require.NoError(t, err)
	var got []<-chan context.Context
	var order []string // the waiters in the order they came
	for i, c := range cs {
		got = append(got, waiting(t, ctx, c, ms[i], int64(i+1)))
		for _, id := range waiters(t, holder, m) {
			if !slices.Contains(order, id) {
				order = append(order, id)
			}
		}
	}
	for i, id := range order {
		// The order made explicit: two that registered within one
		// millisecond (the queue's resolution) are in the order of their ids.
		backdate(t, holder, m, id, time.Duration(len(order)-i)*time.Second)
	}

	before, w0 := snapshot(), wakes(cs)
	release := func() error { return m.Unlock(held) }
	for i := range cs {
		require.NoError(t, release())
		w := <-got[i] // the oldest waiter holds next: the one that registered first
		d := snapshot().since(before)
		assert.Equal(t, counts{attempts: 1, notified: 1}, d, "release %d: one waiter woken, one attempt", i)
		assert.Equal(t, int64(1), wakes(cs)-w0, "release %d: one wake-up across all Clients", i)
		before, w0 = snapshot(), wakes(cs)
		mw := ms[i]
		release = func() error { return mw.Unlock(w) }
	}
	require.NoError(t, release())
}

// Starvation mode: a release whose oldest waiter has waited StarveAfter or
// longer grants the lock to it; the waiter holds without an attempt (the
// notification says so) and its fencing token is newer. A release whose
// oldest waiter is young frees the lock and wakes it instead: the mode ends.
func TestStarvationModeEngagesAndEnds(t *testing.T) {
	holder, a, b := dstest.Client(t), dstest.Client(t), dstest.Client(t)
	name := dstest.Name(t)
	m := newMutex(t, holder, name)
	ma, mb := newMutex(t, a, name), newMutex(t, b, name)
	tune(time.Minute, keep, m, ma, mb)
	ctx := context.Background()

	held, err := m.Lock(ctx)
	require.NoError(t, err)
	tok0, err := m.Token(held)
	require.NoError(t, err)
	gotA := waiting(t, ctx, a, ma, 1)
	old := waiters(t, holder, m)[0]
	backdate(t, holder, m, old, time.Hour) // A has waited an hour: it starves

	before := snapshot()
	require.NoError(t, m.Unlock(held))
	wa := <-gotA
	assert.Equal(t, counts{handed: 1}, snapshot().since(before), "handed the lock: no attempt after the release")
	tokA, err := ma.Token(wa)
	require.NoError(t, err)
	assert.Greater(t, tokA, tok0, "a new hold, a newer token")
	n, err := ma.HoldCount(wa)
	require.NoError(t, err)
	assert.Equal(t, 1, n)

	// B registers now: young, so A's release lets the lock go free and wakes B.
	gotB := waiting(t, ctx, b, mb, 1)
	before = snapshot()
	require.NoError(t, ma.Unlock(wa))
	wb := <-gotB
	assert.Equal(t, counts{attempts: 1, notified: 1}, snapshot().since(before), "woken, then acquired by its own attempt")
	require.NoError(t, mb.Unlock(wb))
}

// A waiter handed the lock keeps it: the watchdog renews the short lease of
// the hand-off before it ends, so the hold outlives it.
func TestHandedLockIsRenewed(t *testing.T) {
	holder, a := dstest.Client(t), dstest.Client(t)
	name := dstest.Name(t)
	m, ma := newMutex(t, holder, name), newMutex(t, a, name)
	tune(starving, 300*time.Millisecond, m, ma)
	ctx := context.Background()
	held, err := m.Lock(ctx)
	require.NoError(t, err)
	gotA := waiting(t, ctx, a, ma, 1)
	before := snapshot()
	require.NoError(t, m.Unlock(held))
	wa := <-gotA
	require.Equal(t, int64(1), snapshot().since(before).handed)
	ttl, err := ma.TTL(wa)
	require.NoError(t, err)
	assert.LessOrEqual(t, ttl, 300*time.Millisecond, "the hand-off's lease")
	// The first renewal comes a third of the hand-off lease after the grant.
	deadline := time.Now().Add(10 * time.Second)
	for ttl <= 300*time.Millisecond && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		ttl, err = ma.TTL(wa)
		require.NoError(t, err)
	}
	assert.Greater(t, ttl, 300*time.Millisecond, "renewed to the watchdog lease")
	require.NoError(t, wa.Err(), "still held")
	require.NoError(t, ma.Unlock(wa))
}

// A waiter that vanished (its Client closed while it waited, so it never
// left the waiter set) is handed the lock, but only for the hand-off lease:
// then the next waiter, nudged by the same message, takes it.
func TestVanishedWaiterLosesItsGrant(t *testing.T) {
	holder, gone, next := dstest.Client(t), dstest.Client(t), dstest.Client(t)
	name := dstest.Name(t)
	m, mg, mn := newMutex(t, holder, name), newMutex(t, gone, name), newMutex(t, next, name)
	const hl = 300 * time.Millisecond
	tune(starving, hl, m, mg, mn)
	ctx := context.Background()
	held, err := m.Lock(ctx)
	require.NoError(t, err)
	errc := make(chan error, 1)
	go func() {
		_, err := mg.Lock(ctx)
		errc <- err
	}()
	waitForWaiters(t, holder, m, 1)
	ghost := waiters(t, holder, m)[0]
	gotNext := waiting(t, ctx, next, mn, 2)
	backdate(t, holder, m, ghost, time.Second) // the vanished waiter is the oldest
	dstest.Crash(gone)                         // its process stops: nothing leaves the waiter set
	require.ErrorIs(t, <-errc, distsync.ErrClosed)
	stillListening(t, holder, m, ghost) // and the server cannot tell
	require.Equal(t, []string{ghost, waiters(t, holder, m)[1]}, waiters(t, holder, m), "the vanished waiter is still registered")

	require.NoError(t, m.Unlock(held))
	rc := holder.Rueidis()
	owner, err := rc.Do(context.Background(), rc.B().Hexists().Key(m.Key()).Field(ghost).Build()).AsBool()
	require.NoError(t, err)
	ttl, err := m.TTL(context.Background())
	require.NoError(t, err)
	if owner {
		assert.LessOrEqual(t, ttl, hl, "handed to the vanished waiter for the hand-off lease at most")
	}
	w := <-gotNext
	n, err := mn.HoldCount(w)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "the next waiter holds")
	holds, err := rc.Do(context.Background(), rc.B().Hexists().Key(m.Key()).Field(ghost).Build()).AsBool()
	require.NoError(t, err)
	assert.False(t, holds, "the vanished waiter's grant is gone")
	require.NoError(t, mn.Unlock(w))
}

// A waiter on a channel its Client listens to already joins it before its
// first attempt, which registers it: one attempt, not two.
func TestWaiterJoiningListenedChannelAttemptsOnce(t *testing.T) {
	c := dstest.Client(t)
	name := dstest.Name(t)
	m := newMutex(t, c, name)
	tune(barging, keep, m)
	ctx := context.Background()
	held, err := m.Lock(ctx)
	require.NoError(t, err)
	first := waiting(t, ctx, c, m, 1) // subscribes: two attempts
	before := snapshot()
	second := waiting(t, ctx, c, m, 2)
	assert.Equal(t, int64(1), snapshot().since(before).attempts, "registered by its first attempt")
	require.NoError(t, m.Unlock(held))
	w := <-first
	require.NoError(t, m.Unlock(w))
	w = <-second
	require.NoError(t, m.Unlock(w))
}

// A waiter that gives up while a release may be handing it the lock leaves
// nothing held: its leave gives back a grant made meanwhile. The release
// and the give-up race on purpose; whichever wins, the waiter either holds
// (Lock returned nil) or its owner holds nothing on the server.
func TestWaiterGivingUpLeavesNothingHeld(t *testing.T) {
	holder, wc := dstest.Client(t), dstest.Client(t)
	name := dstest.Name(t)
	m, mw := newMutex(t, holder, name), newMutex(t, wc, name)
	tune(starving, keep, m, mw)
	for i := range 30 {
		held, err := m.Lock(context.Background())
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		type result struct {
			ctx context.Context
			err error
		}
		res := make(chan result, 1)
		go func() {
			w, err := mw.Lock(ctx)
			res <- result{w, err}
		}()
		waitForWaiters(t, holder, m, 1)
		owner := waiters(t, holder, m)[0]
		go cancel()
		require.NoError(t, m.Unlock(held))
		r := <-res
		if r.err == nil {
			require.NoError(t, mw.Unlock(r.ctx), "round %d", i)
			continue
		}
		require.ErrorIs(t, r.err, context.Canceled, "round %d", i)
		rc := holder.Rueidis()
		holds, err := rc.Do(context.Background(), rc.B().Hexists().Key(m.Key()).Field(owner).Build()).AsBool()
		require.NoError(t, err)
		assert.False(t, holds, "round %d: the waiter that gave up holds nothing", i)
		assert.Empty(t, waiters(t, holder, m), "round %d: nor waits", i)
	}
}

// A woken waiter that vanished (normal mode: the lock is freed and it alone
// is woken) does not stall the queue: the next waiter, nudged by the same
// message, tries within the hand-off lease and takes the free lock, and the
// vanished waiter is dropped from the queue once it has not come back within
// that lease.
func TestWokenWaiterThatVanishedIsDropped(t *testing.T) {
	holder, gone, next := dstest.Client(t), dstest.Client(t), dstest.Client(t)
	name := dstest.Name(t)
	m, mg, mn := newMutex(t, holder, name), newMutex(t, gone, name), newMutex(t, next, name)
	const hl = 300 * time.Millisecond
	tune(time.Hour, hl, m, mg)
	ctx := context.Background()
	held, err := m.Lock(ctx)
	require.NoError(t, err)
	errc := make(chan error, 1)
	go func() {
		_, err := mg.Lock(ctx)
		errc <- err
	}()
	waitForWaiters(t, holder, m, 1)
	ghost := waiters(t, holder, m)[0]
	// The next waiter bounds its sleep by a longer lease than the releases
	// use, so it comes after the ghost's hand-off lease has passed.
	tune(time.Hour, 2*hl, mn)
	gotNext := waiting(t, ctx, next, mn, 2)
	backdate(t, holder, m, ghost, time.Second)
	dstest.Crash(gone) // its process stops: nothing leaves the waiter set
	require.ErrorIs(t, <-errc, distsync.ErrClosed)
	stillListening(t, holder, m, ghost) // and the server cannot tell

	before := snapshot()
	require.NoError(t, m.Unlock(held)) // frees the lock, wakes the ghost, nudges next
	w := <-gotNext
	assert.Equal(t, int64(0), snapshot().since(before).handed, "normal mode: nobody was handed the lock")
	// Released with the shorter lease: the ghost, woken longer ago, is dropped.
	tune(keep, hl, mn) // its Lock has returned: nothing of next reads it now
	require.NoError(t, mn.Unlock(w))
	assert.NotContains(t, waiters(t, holder, m), ghost)
}

// A waiter with an explicit lease longer than the hand-off lease does not
// take a handed grant on trust: it attempts once more, which confirms the
// grant, restamps the acquisition's end and extends the lock to its lease.
func TestHandedExplicitLeaseIsConfirmed(t *testing.T) {
	holder, a := dstest.Client(t), dstest.Client(t)
	name := dstest.Name(t)
	m, ma := newMutex(t, holder, name), newMutex(t, a, name)
	const hl = 300 * time.Millisecond
	tune(starving, hl, m, ma)
	ctx := context.Background()
	held, err := m.Lock(ctx)
	require.NoError(t, err)
	got := make(chan context.Context, 1)
	go func() {
		w, err := ma.TryLock(ctx, time.Minute, time.Minute)
		assert.NoError(t, err)
		got <- w
	}()
	waitForWaiters(t, holder, m, 1)
	before := snapshot()
	require.NoError(t, m.Unlock(held))
	w := <-got
	assert.Equal(t, counts{attempts: 1, notified: 1}, snapshot().since(before), "the grant is confirmed by one attempt")
	ttl, err := ma.TTL(w)
	require.NoError(t, err)
	assert.Greater(t, ttl, hl, "extended to the explicit lease")
	assert.LessOrEqual(t, ttl, time.Minute)
	require.NoError(t, ma.Unlock(w))
}

// A grant to a waiter that vanished moves on within the hand-off lease,
// whether the next waiter is nudged by the grant (it would sleep longer by
// itself: the holder's lease is the watchdog's) or not (it tries again
// within the hand-off lease anyway: the holder's explicit lease is shorter,
// and the grant spares the message).
func TestGrantToVanishedWaiterMovesOnWithinHandoffLease(t *testing.T) {
	const hl = 300 * time.Millisecond
	for _, tc := range []struct {
		name   string
		lease  time.Duration // the holder's (0: the watchdog's)
		nudged bool
	}{{"nudged", 0, true}, {"own timer", 250 * time.Millisecond, false}} {
		t.Run(tc.name, func(t *testing.T) {
			holder, gone, next := dstest.Client(t), dstest.Client(t), dstest.Client(t)
			name := dstest.Name(t)
			m, mg, mn := newMutex(t, holder, name), newMutex(t, gone, name), newMutex(t, next, name)
			tune(starving, hl, m, mg, mn)
			short := context.Background()
			held, err := m.TryLock(short, 0, tc.lease)
			require.NoError(t, err)
			errc := make(chan error, 1)
			go func() {
				_, err := mg.Lock(short)
				errc <- err
			}()
			waitForWaiters(t, holder, m, 1)
			ghost := waiters(t, holder, m)[0]
			gotNext := waiting(t, short, next, mn, 2)
			backdate(t, holder, m, ghost, time.Second) // the vanished waiter is the oldest
			dstest.Crash(gone)
			require.ErrorIs(t, <-errc, distsync.ErrClosed)
			stillListening(t, holder, m, ghost) // the server cannot tell it stopped

			nudges := acquire.Counters().Nudged.Load()
			start := time.Now()
			require.NoError(t, m.Unlock(held))
			w := <-gotNext
			// The bound is the hand-off lease; the margin covers a loaded
			// machine. Without the nudge where it is needed the next waiter
			// would sleep until the holder's watchdog lease (30 s) ended.
			assert.Less(t, time.Since(start), hl+3*time.Second, "the next waiter holds within the hand-off lease")
			assert.Equal(t, tc.nudged, acquire.Counters().Nudged.Load() > nudges, "nudged by the grant")
			n, err := mn.HoldCount(w)
			require.NoError(t, err)
			assert.Equal(t, 1, n, "the next waiter holds")
			require.NoError(t, mn.Unlock(w))
		})
	}
}

// Two waiters that vanished in a row ahead of a live one delay it by about
// the hand-off lease, whether the release grants the lock to the oldest
// (starving) or frees it and wakes the oldest alone (barging): the release
// nudges the two waiters after the one it chose, so the live third bounds
// its sleep by the hand-off lease and then takes the lock its vanished
// grantee let lapse, or the free lock. Before, only the second was nudged,
// and the third slept until the retry time of its refusal: the holder's
// watchdog lease (30 s).
func TestTwoVanishedWaitersDelayNextByHandoffLease(t *testing.T) {
	const hl = 300 * time.Millisecond
	for _, tc := range []struct {
		name   string
		starve time.Duration
	}{{"granted", starving}, {"woken", barging}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			q := behindCrashed(t, 2, 1, tc.starve, hl)
			stillListening(t, q.holder, q.m, q.ghosts[0]) // and the server cannot tell

			start := time.Now()
			require.NoError(t, q.m.Unlock(q.held))
			w := <-q.next
			// The bound is about the hand-off lease; the margin covers a
			// loaded machine, and is a tenth of the delay before.
			assert.Less(t, time.Since(start), hl+3*time.Second, "the live waiter holds within the hand-off lease")
			n, err := q.mn.HoldCount(w)
			require.NoError(t, err)
			assert.Equal(t, 1, n, "the live waiter holds")
			require.NoError(t, q.mn.Unlock(w))
		})
	}
}

// queue is a held mutex m (held by holder, released by Unlock(held)) with
// waiters of a Client that crashed (ghosts, oldest first) ahead of a live
// one, of another Client, whose Lock (on mn) returns on next.
type queue struct {
	holder *distsync.Client
	m, mn  *mutex.Mutex
	held   context.Context
	ghosts []string
	next   <-chan context.Context
}

// behindCrashed makes a queue whose Clients release with the hand-off
// settings starve and hl (tune): the n waiters of the crashed Clients
// registered in this order, before the live one; waiter i waits in Client
// i % clients.
func behindCrashed(t *testing.T, n, clients int, starve, hl time.Duration) queue {
	t.Helper()
	holder, next := dstest.Client(t), dstest.Client(t)
	name := dstest.Name(t)
	m, mn := newMutex(t, holder, name), newMutex(t, next, name)
	dead, md := make([]*distsync.Client, clients), make([]*mutex.Mutex, clients)
	for i := range dead {
		dead[i] = dstest.Client(t)
		md[i] = newMutex(t, dead[i], name)
	}
	tune(starve, hl, append([]*mutex.Mutex{m, mn}, md...)...)
	ctx := context.Background()
	held, err := m.Lock(ctx)
	require.NoError(t, err)
	errs := make(chan error, n)
	for i := range n {
		go func() {
			_, err := md[i%clients].Lock(ctx)
			errs <- err
		}()
		waitForWaiters(t, holder, m, int64(i+1)) // registered in this order
	}
	q := queue{holder: holder, m: m, mn: mn, held: held, ghosts: waiters(t, holder, m)}
	q.next = waiting(t, ctx, next, mn, int64(n+1))
	require.Equal(t, int64(1), listeners(t, holder, m, q.ghosts[0]), "the waiters' Client listens")
	for _, c := range dead {
		dstest.Crash(c) // they all stop: nothing leaves the waiter set
	}
	for range n {
		require.ErrorIs(t, <-errs, distsync.ErrClosed)
	}
	return q
}

// Waiters whose process died are passed over by the release that would
// grant the lock to them or wake them: the server closed their Client's
// subscription, so the grant or the wake-up reaches nobody, and the release
// forgets them and goes on to the next waiter, which holds at once. With a
// hand-off lease of an hour, a release that handed the lock to a dead
// waiter, or woke it alone, would keep the live one waiting for that hour.
// Two dead waiters in a row: the release's common case (unlockfast.lua)
// passes over the first, its full path (mx_next) the second. Seventy: the
// full path forgets every waiter of the dead Client at once (mx_forget),
// where one a turn would stop after 64 turns and leave the live one to its
// own timer (the holder's lease, the watchdog's 30 s). Seventy of seventy
// Clients that died (processes that died at once): from the second Client
// found dead on, the waiters of every Client that no longer listens go at
// once (mx_forget, ds_deaf), where one Client a turn would stop in the
// same way. Seventy whose
// registrations ended while the server still counts their Client as
// listening (a process that stopped with its connections open:
// stillListening; their registrations made to end as time would end them):
// from the second on, every waiter whose registration ended goes at once
// (mx_next), where one a turn would stop after 64 in the same way.
func TestDeadWaitersArePassedOver(t *testing.T) {
	for _, tc := range []struct {
		name    string
		dead    int
		clients int  // the dead waiters' Clients
		ended   bool // their registrations ended, their Client seems to listen
		starve  time.Duration
		want    counts // of the live waiter, from the release on
	}{
		{"granted", 2, 1, false, starving, counts{handed: 1}},
		{"woken", 2, 1, false, barging, counts{attempts: 1, notified: 1}},
		{"granted after 70", 70, 1, false, starving, counts{handed: 1}},
		{"woken after 70", 70, 1, false, barging, counts{attempts: 1, notified: 1}},
		{"granted after 70 Clients", 70, 70, false, starving, counts{handed: 1}},
		{"woken after 70 Clients", 70, 70, false, barging, counts{attempts: 1, notified: 1}},
		{"granted after 70 ended", 70, 1, true, starving, counts{handed: 1}},
		{"woken after 70 ended", 70, 1, true, barging, counts{attempts: 1, notified: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := behindCrashed(t, tc.dead, tc.clients, tc.starve, time.Hour)
			if tc.ended {
				stillListening(t, q.holder, q.m, q.ghosts[0])
				dstest.EndRegistrations(t, q.holder, q.m.Key()+":waiting", q.ghosts)
			} else {
				for _, g := range q.ghosts {
					gone(t, q.holder, q.m, g)
				}
			}
			require.Len(t, waiters(t, q.holder, q.m), tc.dead+1, "the dead waiters are still registered")

			before := snapshot()
			require.NoError(t, q.m.Unlock(q.held))
			var w context.Context
			select {
			case w = <-q.next:
			case <-time.After(20 * time.Second):
				t.Fatal("the live waiter waits behind the dead ones")
			}
			n, err := q.mn.HoldCount(w)
			require.NoError(t, err)
			assert.Equal(t, 1, n, "the live waiter holds")
			assert.Equal(t, tc.want, snapshot().since(before))
			assert.Empty(t, waiters(t, q.holder, q.m), "the dead waiters are forgotten")
			require.NoError(t, q.mn.Unlock(w))
		})
	}
}

// A live waiter whose subscription ends while it waits (here the server
// closes it: its user loses the channel, as a failover or a dropped
// connection would end it) is passed over by a release in the meantime and
// forgotten; once its Client has subscribed again it is woken, tries, and
// takes the lock the release freed. With a hand-off lease of an hour and
// the holder's lease of the watchdog, it would otherwise wait for its own
// timer.
func TestWaiterPassedOverWhileResubscribingAcquires(t *testing.T) {
	s := redistest.Shared(t)
	redistest.RequireReal(t, s, "ACL users: the embedded server has none")
	admin := s.Client(t)
	ctx := context.Background()
	user, acl := dstest.ACLUser(t, s, "passover")
	holder := dstest.Client(t)
	wc := dstest.Client(t, func(o *distsync.Options) { o.Username, o.Password = user, "pw" })
	name := dstest.Name(t)
	m, mw := newMutex(t, holder, name), newMutex(t, wc, name)
	tune(starving, time.Hour, m, mw)
	held, err := m.Lock(ctx)
	require.NoError(t, err)
	got := waiting(t, ctx, wc, mw, 1)
	w := waiters(t, holder, m)[0]
	require.Equal(t, int64(1), listeners(t, holder, m, w))

	acl("resetchannels") // the server closes the waiter's subscription; resubscribing is refused
	gone(t, holder, m, w)
	before := snapshot()
	require.NoError(t, m.Unlock(held))
	assert.Empty(t, waiters(t, holder, m), "the waiter, not listening, is passed over and forgotten")
	held2, err := admin.Do(ctx, admin.B().Exists().Key(m.Key()).Build()).AsInt64()
	require.NoError(t, err)
	assert.Zero(t, held2, "nobody was granted the lock")
	acl("allchannels") // the Client subscribes again and wakes its waiter
	select {
	case h := <-got:
		require.NoError(t, mw.Unlock(h))
	case <-time.After(20 * time.Second):
		t.Fatal("the waiter passed over does not acquire once subscribed again")
	}
	assert.Equal(t, int64(0), snapshot().since(before).timer, "woken by its subscription's return, not its timer")
}

// A waiter that spins (WithSpin) listens on no channel, and says so: a
// release grants it the lock as it grants a waiter that listens, and it
// finds the grant when it polls. It is not passed over for the waiter
// behind it, whose Client listens.
func TestSpinningWaiterIsGranted(t *testing.T) {
	holder, spinner, next := dstest.Client(t), dstest.Client(t), dstest.Client(t)
	name := dstest.Name(t)
	m, ms, mn := newMutex(t, holder, name), newMutex(t, spinner, name), newMutex(t, next, name)
	tune(starving, time.Hour, m, ms, mn)
	ctx := context.Background()
	held, err := m.Lock(ctx)
	require.NoError(t, err)
	spun := waiting(t, distsync.WithSpin(ctx, distsync.Spin{Min: time.Millisecond, Max: 5 * time.Millisecond}), spinner, ms, 1)
	first := waiters(t, holder, m)[0]
	backdate(t, holder, m, first, time.Second) // the oldest
	require.Equal(t, int64(0), listeners(t, holder, m, first), "a spinning waiter's Client listens on no channel")
	gotNext := waiting(t, ctx, next, mn, 2)

	require.NoError(t, m.Unlock(held))
	var w context.Context
	select {
	case w = <-spun:
	case <-gotNext:
		t.Fatal("the waiter behind the spinning one was granted the lock first")
	}
	n, err := ms.HoldCount(w)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "the spinning waiter holds")
	assert.Len(t, waiters(t, holder, m), 1, "the waiter behind it still waits")
	require.NoError(t, ms.Unlock(w))
	w = <-gotNext
	require.NoError(t, mn.Unlock(w))
}

// Two waiters that vanished ahead of a live one of the same Client (here
// entries of no acquisition, as a paused goroutine's would stay) delay it
// by about the hand-off lease too: the release's one message to that
// Client names both waiters after the grantee ('<second>,<third>').
func TestVanishedWaitersOfOneClientDelayNextByHandoffLease(t *testing.T) {
	const hl = 300 * time.Millisecond
	holder, next := dstest.Client(t), dstest.Client(t)
	name := dstest.Name(t)
	m, mn := newMutex(t, holder, name), newMutex(t, next, name)
	tune(starving, hl, m, mn)
	ctx := context.Background()
	held, err := m.Lock(ctx)
	require.NoError(t, err)
	gotNext := waiting(t, ctx, next, mn, 1)
	rc := holder.Rueidis()
	sec := dstest.ServerSecond(t, holder)
	for i, age := range []time.Duration{2 * time.Second, time.Second} { // older than the live waiter
		id := fmt.Sprintf("%s:ghost%d:a%d", next.ID(), i, i)
		entry := fmt.Sprintf("%d a%d w 30000", sec*1000+time.Minute.Milliseconds(), i)
		require.NoError(t, rc.Do(ctx, rc.B().Zadd().Key(m.Key()+":waiters").ScoreMember().ScoreMember(float64(sec*1000000-age.Microseconds()), id).Build()).Error())
		require.NoError(t, rc.Do(ctx, rc.B().Hset().Key(m.Key()+":waiting").FieldValue().FieldValue(id, entry).Build()).Error())
	}
	require.Len(t, waiters(t, holder, m), 3)

	start := time.Now()
	require.NoError(t, m.Unlock(held))
	w := <-gotNext
	// The bound is about the hand-off lease; the margin covers a loaded
	// machine. Without the nudge the live waiter would sleep until the
	// holder's watchdog lease (30 s) ended.
	assert.Less(t, time.Since(start), hl+3*time.Second, "the live waiter holds within the hand-off lease")
	require.NoError(t, mn.Unlock(w))
}
