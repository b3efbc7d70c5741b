package fairlock_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/fairlock"
	"github.com/distsync/distsync/internal/acquire"
	"github.com/distsync/distsync/internal/core"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
)

var _ distsync.Locker = (*fairlock.FairLock)(nil)

func TestMain(m *testing.M) {
	options = dstest.ExampleOptions(0)
	redistest.Main(m)
}

func newFair(t testing.TB, c *distsync.Client, name string) *fairlock.FairLock {
	t.Helper()
	f, err := c.FairLock(name)
	require.NoError(t, err)
	return f
}

// withOwner returns ctx carrying a new owner of c and that owner's id
// (its waiters are "<owner>:<acquisition id>": see waiterOwners).
func withOwner(c *distsync.Client, ctx context.Context) (context.Context, string) {
	ctx, id := core.WithOwner(ctx)
	return ctx, c.ID() + ":" + id
}

func TestFIFOOrder(t *testing.T) {
	t.Parallel()
	holderClient := dstest.Client(t)
	clients := []*distsync.Client{dstest.Client(t), dstest.Client(t)}
	name := dstest.Name(t)
	f := newFair(t, holderClient, name)
	ctx := context.Background()
	held, err := f.Lock(ctx)
	require.NoError(t, err)

	const waiters = 50
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	for i := range waiters {
		w := newFair(t, clients[i%2], name)
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := w.Lock(ctx)
			if !assert.NoError(t, err) {
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			assert.NoError(t, w.Unlock(got))
		}()
		waitForQueue(t, f, i+1) // queued in this order
	}
	var wakesBefore int64
	for _, c := range clients {
		w := c.Stats().NotifierWakes
		wakesBefore += w
	}
	require.NoError(t, f.Unlock(held))
	wg.Wait()

	want := make([]int, waiters)
	for i := range want {
		want[i] = i
	}
	assert.Equal(t, want, order, "acquired in queue order")
	var wakes int64
	for _, c := range clients {
		st := c.Stats()
		msgs, w := st.NotifierMessages, st.NotifierWakes
		wakes += w
		assert.LessOrEqual(t, msgs, int64(waiters), "at most one message per release")
	}
	// 50 releases found a waiter queued (the holder's and 49 waiters'): each
	// woke exactly one waiter, the head.
	assert.Equal(t, int64(waiters), wakes-wakesBefore, "one wake-up per release")
	assert.Empty(t, dstest.Keys(t, holderClient, f.Key()+"*"))
}

func TestMutualExclusion(t *testing.T) {
	t.Parallel()
	clients := []*distsync.Client{dstest.Client(t), dstest.Client(t)}
	name := dstest.Name(t)
	var lockers []distsync.Locker
	for g := range 32 {
		lockers = append(lockers, newFair(t, clients[g%2], name))
	}
	dstest.Contend(t, lockers, 10, time.Minute)
}

func TestGivingUpLeavesNoTrace(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	f := newFair(t, c, dstest.Name(t))
	ctx := context.Background()
	held, err := f.Lock(ctx)
	require.NoError(t, err)

	first, firstID := withOwner(c, ctx)
	cancelled, cancelledID := withOwner(c, ctx)
	cancelled, cancel := context.WithCancel(cancelled)
	budget, budgetID := withOwner(c, ctx)
	last, lastID := withOwner(c, ctx)
	results := make(map[string]chan error)
	got := make(chan string, 2)
	start := func(wctx context.Context, id string, wait time.Duration, n int) {
		errc := make(chan error, 1)
		results[id] = errc
		go func() {
			h, err := f.TryLock(wctx, wait, 0)
			if err == nil {
				got <- id
				err = f.Unlock(h)
			}
			errc <- err
		}()
		if n > 0 {
			waitForQueue(t, f, n)
		}
	}
	start(first, firstID, time.Minute, 1)
	start(cancelled, cancelledID, time.Minute, 2)
	start(last, lastID, time.Minute, 3)
	// It queues behind them (a wait budget always queues) and gives up.
	start(budget, budgetID, 300*time.Millisecond, 0)

	cancel()
	assert.ErrorIs(t, <-results[cancelledID], context.Canceled)
	assert.ErrorIs(t, <-results[budgetID], distsync.ErrNotAcquired, "its budget is spent")
	assert.Equal(t, []string{firstID, lastID}, waiterOwners(queue(t, c, f)), "the two that gave up left the queue")
	assert.ElementsMatch(t, []string{firstID, lastID}, waiterOwners(deadlines(t, c, f)), "and their deadlines")

	require.NoError(t, f.Unlock(held))
	assert.Equal(t, firstID, <-got)
	assert.Equal(t, lastID, <-got)
	require.NoError(t, <-results[firstID])
	require.NoError(t, <-results[lastID])
	assert.Empty(t, dstest.Keys(t, c, f.Key()+"*"))
}

func TestTryLockNeverQueues(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	f := newFair(t, c, dstest.Name(t))
	ctx := context.Background()
	held, err := f.Lock(ctx)
	require.NoError(t, err)
	_, err = f.TryLock(ctx, 0, 0)
	assert.ErrorIs(t, err, distsync.ErrNotAcquired)
	n, err := f.Waiting(ctx)
	require.NoError(t, err)
	assert.Zero(t, n)
	require.NoError(t, f.Unlock(held))

	// A free lock with a queue is not free for newcomers: no barging.
	ghost := queueGhost(t, c, f, time.Minute)
	_, err = f.TryLock(ctx, 0, 0)
	assert.ErrorIs(t, err, distsync.ErrNotAcquired)
	n, err = f.Waiting(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	f.Leave(ctx, ghost)
	got, err := f.TryLock(ctx, 0, 0)
	require.NoError(t, err)
	require.NoError(t, f.Unlock(got))
}

// The head of the queue of a free lock gives up: the next waiter is handed
// the lock at once (by message, not by its own timer).
func TestHeadLeavingHandsOnToNext(t *testing.T) {
	// Not parallel: it reads the process-wide wake-up counters.
	c := dstest.Client(t)
	f := newFair(t, c, dstest.Name(t))
	ctx := context.Background()
	// A waiter of another process heads the queue of a free lock; it would
	// keep its place for a minute.
	ghost := queueGhost(t, c, f, time.Minute)
	timerBefore := acquire.Counters().Timer.Load()
	got := lockQueued(t, f, 2)
	f.Leave(ctx, ghost) // it gives up: the next waiter is granted the lock at once
	h := <-got
	require.NoError(t, f.Unlock(h))
	assert.Equal(t, timerBefore, acquire.Counters().Timer.Load(), "granted by notification, not woken by its timer")
}

func TestVanishedWaiterSkipped(t *testing.T) {
	t.Parallel()
	// Short leases and, for the waiter that will vanish, a short window: it
	// is dropped a lease plus a window after its last attempt.
	c := dstest.Client(t, func(o *distsync.Options) { o.Watchdog.Lease = 900 * time.Millisecond })
	doomed := dstest.Client(t, func(o *distsync.Options) { o.WaiterWindow = 300 * time.Millisecond })
	name := dstest.Name(t)
	f := newFair(t, c, name)
	ctx := context.Background()
	held, err := f.Lock(ctx)
	require.NoError(t, err)

	vanished := make(chan error, 1)
	v := newFair(t, doomed, name)
	go func() {
		_, err := v.Lock(ctx)
		vanished <- err
	}()
	waitForQueue(t, f, 1)
	got := lockQueued(t, f, 2)
	dstest.Crash(doomed) // the head's process dies without leaving the queue
	assert.ErrorIs(t, <-vanished, distsync.ErrClosed)
	dstest.StandIn(t, c, channelOf(f, doomed)) // and the server cannot tell

	require.NoError(t, f.Unlock(held)) // wakes the vanished head, if still queued: nobody
	var h context.Context
	select {
	case h = <-got:
	case <-time.After(time.Minute):
		t.Fatal("the waiter behind a vanished head never got the lock")
	}
	n, err := f.Waiting(ctx)
	require.NoError(t, err)
	assert.Zero(t, n, "the vanished waiter was dropped")
	require.NoError(t, f.Unlock(h))
}

// A head of the queue that vanished, whose holder's lock lapses without a
// release (the holder's lease ran out, or its process died too), delays the
// live waiters behind it by about the hand-off lease: the first attempt
// that finds the lock free with the head not taking it wakes the head as a
// release would, cutting its window to the hand-off lease. Before, nothing
// woke it, and the waiters behind it waited for its window to end: the
// holder's lease and a waiter window (30 s by default) after its last attempt.
func TestVanishedHeadOfLapsedLockDelaysQueueByHandoffLease(t *testing.T) {
	const (
		hl    = 500 * time.Millisecond
		lease = time.Second // the holder's, which lapses
	)
	for _, tc := range []struct {
		name    string
		crashed bool // the holder's process dies (else its explicit lease runs out)
	}{{"lease ran out", false}, {"holder crashed", true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			holder := dstest.Client(t, func(o *distsync.Options) { o.Watchdog.Lease = lease })
			gone, other := dstest.Client(t), dstest.Client(t)
			name := dstest.Name(t)
			f, fg, fo := newFair(t, holder, name), newFair(t, gone, name), newFair(t, other, name)
			for _, x := range []*fairlock.FairLock{f, fg, fo} {
				fairlock.Tune(x, hl)
			}
			ctx := context.Background()
			if tc.crashed {
				_, err := f.Lock(ctx)
				require.NoError(t, err)
			} else {
				_, err := f.TryLock(ctx, 0, lease)
				require.NoError(t, err)
			}
			vanished := make(chan error, 1)
			go func() {
				_, err := fg.Lock(ctx)
				vanished <- err
			}()
			waitForQueue(t, f, 1)
			got := lockQueued(t, fo, 2)
			start := time.Now()
			dstest.Crash(gone) // the head's process dies without leaving the queue
			require.ErrorIs(t, <-vanished, distsync.ErrClosed)
			if tc.crashed {
				dstest.Crash(holder) // its lock is never released: it lapses
			}
			h := <-got
			// The live waiter would have tried again when the holder's lease
			// ended: it holds within the hand-off lease after that (the margin
			// covers a loaded machine), not a waiter window (30 s) later.
			assert.Less(t, time.Since(start), lease+hl+5*time.Second, "the waiter behind the vanished head holds within the hand-off lease of the lease's end")
			assert.Empty(t, queue(t, other, fo), "the vanished head was dropped")
			require.NoError(t, fo.Unlock(h))
		})
	}
}

// Two waiters at the head of the queue that vanished without the server
// knowing (their process stopped with its connections open:
// dstest.StandIn) delay the live waiter behind them by about twice the
// hand-off lease: the
// release grants the lock to the first and nudges the two after it, so the
// live third tries again within the hand-off lease, finds the lock lapsed
// and wakes the second, whose window that cuts, and holds a hand-off lease
// later. Before, only the second was nudged, and the third slept until the
// retry time of its refusal: the holder's watchdog lease (30 s).
func TestTwoVanishedWaitersDelayQueueByHandoffLease(t *testing.T) {
	t.Parallel()
	const hl = 300 * time.Millisecond
	holder, gone, other := dstest.Client(t), dstest.Client(t), dstest.Client(t)
	name := dstest.Name(t)
	f, fg, fo := newFair(t, holder, name), newFair(t, gone, name), newFair(t, other, name)
	for _, x := range []*fairlock.FairLock{f, fg, fo} {
		fairlock.Tune(x, hl)
	}
	ctx := context.Background()
	held, err := f.Lock(ctx)
	require.NoError(t, err)
	vanished := make(chan error, 2)
	for i := range 2 {
		go func() {
			_, err := fg.Lock(ctx)
			vanished <- err
		}()
		waitForQueue(t, f, i+1) // queued in this order
	}
	got := lockQueued(t, fo, 3)
	dstest.Crash(gone) // both die without leaving the queue
	for range 2 {
		require.ErrorIs(t, <-vanished, distsync.ErrClosed)
	}
	dstest.StandIn(t, holder, channelOf(f, gone)) // and the server cannot tell

	start := time.Now()
	require.NoError(t, f.Unlock(held))
	h := <-got
	// The bound is about twice the hand-off lease; the margin covers a
	// loaded machine, and is a tenth of the delay before.
	assert.Less(t, time.Since(start), 2*hl+3*time.Second, "the live waiter holds within twice the hand-off lease")
	assert.Empty(t, queue(t, other, fo), "the vanished waiters were dropped")
	require.NoError(t, fo.Unlock(h))
}

// channelOf is the channel of f where releases tell the waiters of c.
func channelOf(f *fairlock.FairLock, c *distsync.Client) string {
	return f.Key() + ":ch:" + c.ID()
}

// Waiters at the head of the queue whose Client no longer listens on its
// channel (here its process died: its connections closed, and the server
// closed its subscription) are passed over by the release and forgotten,
// two in a row, and the live waiter behind them is granted the lock by that
// release. With the hand-off lease and the dead waiters' leases of an hour,
// it would otherwise wait for an hour, or until their windows ended.
// Seventy: the release forgets every waiter of the dead Client at once
// (dsq_forget), where one a turn would stop after 64 turns and wake the
// 65th, dead too. Seventy of seventy Clients that died (processes that died
// at once): from the second Client found dead on, the waiters of every
// Client that no longer listens go at once (dsq_forget, ds_deaf), where one
// Client a turn would stop in the same way.
//
// The other paths that hand the lock on or wake the head pass over in the
// same way (dsq_head): the head of the queue of a free lock giving up
// (leave), a ForceUnlock from another Client (force), and the first attempt
// that finds the lock lapsed (lapse: the holder's process died) with
// another waiter at the head. Before, each woke the next waiter only, dead
// or not, and with the dead waiters' windows of 10 minutes the live one
// behind them waited for those to end.
func TestDeadWaitersArePassedOver(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		n, clients int    // dead waiters, and their Clients
		how        string // release, leave (the head of a free lock gives up), force or lapse
	}{
		{"2", 2, 1, "release"}, {"70", 70, 1, "release"}, {"70 of 70 Clients", 70, 70, "release"},
		{"leave/none", 0, 0, "leave"}, {"leave/3", 3, 1, "leave"}, {"leave/70 of 70 Clients", 70, 70, "leave"},
		{"force/70 of 70 Clients", 70, 70, "force"}, {"lapse/3", 3, 1, "lapse"}, {"lapse/70 of 70 Clients", 70, 70, "lapse"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			deadWaitersPassedOver(t, tc.n, tc.clients, tc.how)
		})
	}
}

// deadWaitersPassedOver is TestDeadWaitersArePassedOver with dead waiters,
// waiter i of Client i % clients, and two live waiters behind them: the
// first is granted the lock by the release (or the leave of the head ahead
// of them all, a waiter of no process, while the lock is free; or by the
// force unlock, or its own attempt once the lock lapsed), the second stays
// queued, with the queue's expiry, and is granted it by the first's
// release. Every waiter's window is 10 minutes.
func deadWaitersPassedOver(t *testing.T, dead, clients int, how string) {
	long := func(o *distsync.Options) { o.WaiterWindow = 10 * time.Minute }
	lease := time.Hour // the holder's, unless its lock lapses
	if how == "lapse" {
		lease = time.Second
	}
	holder := dstest.Client(t, long, func(o *distsync.Options) { o.Watchdog.Lease = lease })
	other := dstest.Client(t, long)
	name := dstest.Name(t)
	f, fo := newFair(t, holder, name), newFair(t, other, name)
	crashed, fds := make([]*distsync.Client, clients), make([]*fairlock.FairLock, clients)
	for i := range crashed {
		crashed[i] = dstest.Client(t, long)
		fds[i] = newFair(t, crashed[i], name)
	}
	for _, x := range append([]*fairlock.FairLock{f, fo}, fds...) {
		fairlock.Tune(x, time.Hour)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var held context.Context
	ahead := 0 // queued ahead of the dead waiters
	if how == "leave" {
		queueGhost(t, other, fo, 10*time.Minute)
		ahead = 1
	} else {
		var err error
		held, err = f.Lock(ctx) // renewed by the watchdog
		require.NoError(t, err)
	}
	vanished := make(chan error, dead)
	for i := range dead {
		go func() {
			_, err := fds[i%clients].TryLock(ctx, distsync.Forever, time.Hour)
			vanished <- err
		}()
		waitForQueue(t, f, ahead+i+1) // queued in this order
	}
	got := lockQueued(t, fo, ahead+dead+1)
	fl := newFair(t, dstest.Client(t, long), name) // a live waiter behind, who stays queued
	fairlock.Tune(fl, time.Hour)
	gotLast := lockQueued(t, fl, ahead+dead+2)
	last := queue(t, other, fo)[ahead+dead+1]
	if clients > 0 {
		require.Equal(t, int64(1), dstest.Listeners(t, holder, channelOf(f, crashed[0])), "the dead waiters' Client listened")
	}
	for _, c := range crashed {
		dstest.Crash(c)
	}
	for range dead {
		require.ErrorIs(t, <-vanished, distsync.ErrClosed)
	}
	for _, c := range crashed {
		dstest.WaitUnsubscribed(t, holder, channelOf(f, c))
	}

	switch how {
	case "leave":
		require.NoError(t, fo.Leave(ctx, queue(t, other, fo)[0]))
	case "force":
		ok, err := fo.ForceUnlock(ctx)
		require.NoError(t, err)
		require.True(t, ok)
	case "lapse":
		dstest.Crash(holder) // its lock lapses within a second
	default:
		require.NoError(t, f.Unlock(held))
	}
	var h context.Context
	select {
	case h = <-got:
	case <-time.After(20 * time.Second):
		t.Fatal("the live waiter waits behind the dead ones")
	}
	n, err := fo.HoldCount(h)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "the live waiter holds")
	assert.Equal(t, []string{last}, queue(t, other, fo), "the dead waiters are forgotten, the live one behind stays")
	rc := other.Rueidis()
	ttl, err := rc.Do(ctx, rc.B().Pttl().Key(f.Key()+":queue").Build()).AsInt64()
	require.NoError(t, err)
	assert.Positive(t, ttl, "the queue keeps its expiry")
	require.NoError(t, fo.Unlock(h))
	select {
	case h = <-gotLast:
	case <-time.After(20 * time.Second):
		t.Fatal("the live waiter behind is not granted the lock")
	}
	require.NoError(t, fl.Unlock(h))
}

// A waiter that spins (WithSpin) listens on no channel, and says so: a
// release grants it the lock as it grants a waiter that listens, and it
// finds the grant when it polls. It is not passed over for the waiter
// behind it, whose Client listens.
func TestSpinningWaiterIsGranted(t *testing.T) {
	t.Parallel()
	holder, spinner, other := dstest.Client(t), dstest.Client(t), dstest.Client(t)
	name := dstest.Name(t)
	f, fs, fo := newFair(t, holder, name), newFair(t, spinner, name), newFair(t, other, name)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	held, err := f.TryLock(ctx, 0, time.Hour)
	require.NoError(t, err)
	spun := make(chan context.Context, 1)
	go func() {
		h, err := fs.Lock(distsync.WithSpin(ctx, distsync.Spin{Min: time.Millisecond, Max: 5 * time.Millisecond}))
		assert.NoError(t, err)
		spun <- h
	}()
	waitForQueue(t, f, 1)
	require.Zero(t, dstest.Listeners(t, holder, channelOf(f, spinner)), "a spinning waiter's Client listens on no channel")
	gotNext := lockQueued(t, fo, 2)

	require.NoError(t, f.Unlock(held))
	var h context.Context
	select {
	case h = <-spun:
	case <-gotNext:
		t.Fatal("the waiter behind the spinning one was granted the lock first")
	}
	n, err := fs.HoldCount(h)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "the spinning waiter holds")
	require.NoError(t, fs.Unlock(h))
	h = <-gotNext
	require.NoError(t, fo.Unlock(h))
}

// A live head of the queue keeps its turn when the lock lapses without a
// release: a waiter behind it that tries first only wakes it (its window
// cut to the hand-off lease), and the head, which comes within that,
// takes the lock before the waiter behind it.
func TestLiveHeadOfLapsedLockKeepsItsTurn(t *testing.T) {
	t.Parallel()
	const lease = 500 * time.Millisecond // the holder's, which lapses
	holder, a, b := dstest.Client(t), dstest.Client(t), dstest.Client(t)
	name := dstest.Name(t)
	f, fa, fb := newFair(t, holder, name), newFair(t, a, name), newFair(t, b, name)
	ctx := context.Background()
	_, err := f.TryLock(ctx, 0, lease)
	require.NoError(t, err)
	gotA := lockQueued(t, fa, 1)
	gotB := lockQueued(t, fb, 2)
	select {
	case ha := <-gotA:
		require.NoError(t, fa.Unlock(ha))
		require.NoError(t, fb.Unlock(<-gotB))
	case hb := <-gotB:
		t.Error("the waiter behind the head took the lock first")
		require.NoError(t, fb.Unlock(hb))
		require.NoError(t, fa.Unlock(<-gotA))
	}
}

// Waiting counts the waiters whose window has not ended, as the mutex, the
// read-write lock and Client.Inspect do: a waiter that vanished still
// stands in the queue once its window ended, until an attempt drops it, but
// no longer counts.
func TestWaitingCountsLiveWaiters(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	f := newFair(t, c, dstest.Name(t))
	ctx := context.Background()
	held, err := f.Lock(ctx)
	require.NoError(t, err)
	got := lockQueued(t, f, 1)
	queueGhost(t, c, f, -time.Minute) // its window ended a minute ago
	require.Len(t, queue(t, c, f), 2, "the ended waiter is still queued")
	n, err := f.Waiting(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "the ended waiter does not count")
	info, err := c.Inspect(ctx, f.Name())
	require.NoError(t, err)
	assert.Len(t, info.Waiters, n, "as Inspect counts")
	require.NoError(t, f.Unlock(held))
	require.NoError(t, f.Unlock(<-got))
}

func TestForceUnlockWakesHead(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	f := newFair(t, c, dstest.Name(t))
	ctx := context.Background()
	_, err := f.TryLock(ctx, 0, 10*time.Minute)
	require.NoError(t, err)
	got := lockQueued(t, f, 1)
	ok, err := f.ForceUnlock(ctx)
	require.NoError(t, err)
	assert.True(t, ok)
	require.NoError(t, f.Unlock(<-got))
	ok, err = f.ForceUnlock(ctx)
	require.NoError(t, err)
	assert.False(t, ok)
}

// lockQueued starts f.Lock in a goroutine and waits until n waiters are
// queued, the last of them this one; its hold comes on the channel.
func lockQueued(t *testing.T, f *fairlock.FairLock, n int) <-chan context.Context {
	t.Helper()
	got := make(chan context.Context, 1)
	go func() {
		h, err := f.Lock(context.Background())
		assert.NoError(t, err)
		got <- h
	}()
	waitForQueue(t, f, n)
	return got
}

// waitForQueue waits until n waiters are queued.
func waitForQueue(t *testing.T, f *fairlock.FairLock, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		got, err := f.Waiting(context.Background())
		return err == nil && got == n
	}, 10*time.Second, time.Millisecond)
}

func queue(t *testing.T, c *distsync.Client, f *fairlock.FairLock) []string {
	t.Helper()
	rc := c.Rueidis()
	ids, err := rc.Do(context.Background(), rc.B().Lrange().Key(f.Key()+":queue").Start(0).Stop(-1).Build()).AsStrSlice()
	require.NoError(t, err)
	return ids
}

// waiterOwners returns the owners of waiter ids: a waiter is one
// acquisition of its owner, "<owner>:<acquisition id>:<mode><lease ms>".
func waiterOwners(ids []string) []string {
	owners := make([]string, len(ids))
	for i, id := range ids { // '<owner>:<acquisition id>:<mode><lease ms>'
		id = id[:strings.LastIndexByte(id, ':')]
		owners[i] = id[:strings.LastIndexByte(id, ':')]
	}
	return owners
}

// deadlines returns the waiters with a deadline.
func deadlines(t *testing.T, c *distsync.Client, f *fairlock.FairLock) []string {
	t.Helper()
	rc := c.Rueidis()
	ids, err := rc.Do(context.Background(), rc.B().Zrange().Key(f.Key()+":deadlines").Min("0").Max("-1").Build()).AsStrSlice()
	require.NoError(t, err)
	return ids
}

// queueGhost queues a waiter of no process with a window of d, as another
// process would, and returns its id.
func queueGhost(t *testing.T, c *distsync.Client, f *fairlock.FairLock, d time.Duration) string {
	t.Helper()
	const ghost = "ghost:1"
	pushGhost(t, c, f, ghost, d, false)
	return ghost
}

// pushGhost queues waiter id of no process with a window of d, at the tail
// of the queue or, with head, ahead of every waiter.
func pushGhost(t *testing.T, c *distsync.Client, f *fairlock.FairLock, id string, d time.Duration, head bool) {
	t.Helper()
	dstest.QueueGhost(t, c, f.Key()+":queue", f.Key()+":deadlines", id, d, head)
}

// A release grants the lock to the head of the queue: the head holds when
// the message arrives, without an attempt, under a newer fencing token.
func TestReleaseGrantsHead(t *testing.T) {
	// Not parallel: it reads the process-wide counters of the acquire loop.
	holder, other := dstest.Client(t), dstest.Client(t)
	name := dstest.Name(t)
	f, fo := newFair(t, holder, name), newFair(t, other, name)
	held, err := f.Lock(context.Background())
	require.NoError(t, err)
	tok0, err := f.Token(held)
	require.NoError(t, err)
	got := lockQueued(t, fo, 1)
	stats := acquire.Counters()
	attempts, handed := stats.Attempts.Load(), stats.Handed.Load()
	require.NoError(t, f.Unlock(held))
	h := <-got
	assert.Equal(t, attempts, stats.Attempts.Load(), "no attempt after the release")
	assert.Equal(t, handed+1, stats.Handed.Load(), "handed the lock")
	tok, err := fo.Token(h)
	require.NoError(t, err)
	assert.Greater(t, tok, tok0)
	ttl, err := fo.TTL(h)
	require.NoError(t, err)
	assert.LessOrEqual(t, ttl, core.DefaultHandoffLease, "the hand-off's lease, until its renewal")
	require.NoError(t, fo.Unlock(h))
	assert.Empty(t, dstest.Keys(t, holder, f.Key()+"*"), "nothing left: the fencing counter is the slot's")
}

// A release whose head of the queue vanished and whose window ended grants
// the lock to the waiter after it at once: the release's common case reads
// the head's window, and a head past it goes to the full path, which drops
// it, rather than granting it the lock for a hand-off lease.
// Twenty such heads: the full path drops them all in one pass over the
// queue (dsq_remove writes it anew), keeping the live waiters' order and
// the queue's expiry.
func TestReleaseSkipsHeadWhoseWindowEnded(t *testing.T) {
	// Not parallel: it reads the process-wide counters of the acquire loop.
	for _, ghosts := range []int{1, 20} {
		t.Run(strconv.Itoa(ghosts), func(t *testing.T) {
			holder, other, last := dstest.Client(t), dstest.Client(t), dstest.Client(t)
			name := dstest.Name(t)
			f, fo, fl := newFair(t, holder, name), newFair(t, other, name), newFair(t, last, name)
			held, err := f.Lock(context.Background())
			require.NoError(t, err)
			got := lockQueued(t, fo, 1)
			gotLast := lockQueued(t, fl, 2)
			behind := queue(t, holder, f)[1]
			for i := range ghosts {
				// an id a release can grant from
				pushGhost(t, holder, f, "ghost:"+strconv.Itoa(i)+":a:w30000", -time.Minute, true)
			}
			require.Len(t, queue(t, holder, f), ghosts+2)
			stats := acquire.Counters()
			handed := stats.Handed.Load()
			require.NoError(t, f.Unlock(held))
			h := <-got
			assert.Equal(t, handed+1, stats.Handed.Load(), "the live waiter was handed the lock")
			assert.Equal(t, []string{behind}, queue(t, holder, f), "the ended heads were dropped, the live waiter behind stays")
			rc := holder.Rueidis()
			ttl, err := rc.Do(context.Background(), rc.B().Pttl().Key(f.Key()+":queue").Build()).AsInt64()
			require.NoError(t, err)
			assert.Positive(t, ttl, "the queue keeps its expiry")
			require.NoError(t, fo.Unlock(h))
			require.NoError(t, fl.Unlock(<-gotLast))
		})
	}
}

// A waiter that gives up while a release may be granting it the lock
// leaves nothing held: its leave gives back a grant made meanwhile. The
// release and the give-up race on purpose.
func TestWaiterGivingUpWhileGrantedLeavesNothingHeld(t *testing.T) {
	t.Parallel()
	holder, wc := dstest.Client(t), dstest.Client(t)
	name := dstest.Name(t)
	f, fw := newFair(t, holder, name), newFair(t, wc, name)
	for i := range 30 {
		held, err := f.Lock(context.Background())
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		type result struct {
			ctx context.Context
			err error
		}
		res := make(chan result, 1)
		go func() {
			h, err := fw.Lock(ctx)
			res <- result{h, err}
		}()
		waitForQueue(t, f, 1)
		go cancel()
		require.NoError(t, f.Unlock(held))
		r := <-res
		if r.err == nil {
			require.NoError(t, fw.Unlock(r.ctx), "round %d", i)
			continue
		}
		require.ErrorIs(t, r.err, context.Canceled, "round %d", i)
		n, err := f.Holders(context.Background())
		require.NoError(t, err)
		assert.Zero(t, n, "round %d: the waiter that gave up holds nothing", i)
		assert.Empty(t, queue(t, holder, f), "round %d: nor waits", i)
	}
}
