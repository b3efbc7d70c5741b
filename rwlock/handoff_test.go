package rwlock_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/acquire"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/rwlock"
)

// A release hands the lock to the waiters directly: a writer's release
// grants every waiting reader, which holds when the grant's message arrives,
// without an attempt of its own.
func TestWriteReleaseGrantsWaitingReaders(t *testing.T) {
	c := dstest.Client(t)
	rw := newRW(t, c, dstest.Name(t))
	ctx := context.Background()
	w, err := rw.Write().Lock(ctx)
	require.NoError(t, err)
	const n = 3
	got := make(chan context.Context, n)
	for range n {
		go func() {
			r, err := rw.Read().Lock(ctx)
			assert.NoError(t, err)
			got <- r
		}()
	}
	waitForWaiters(t, c, rw, "rwaiters", n)
	handed := acquire.Counters().Handed.Load()
	tokens := map[int64]bool{}
	wt, err := rw.Write().Token(w)
	require.NoError(t, err)
	require.NoError(t, rw.Write().Unlock(w))
	for range n {
		r := <-got
		tok, err := rw.Read().Token(r)
		require.NoError(t, err)
		assert.Greater(t, tok, wt, "a granted hold's token follows the writer's")
		tokens[tok] = true
		require.NoError(t, rw.Read().Unlock(r))
	}
	// Each reader is an owner of its own: every hold has a token of its own.
	assert.Len(t, tokens, n)
	assert.GreaterOrEqual(t, acquire.Counters().Handed.Load()-handed, int64(1), "held by the grant's message")
	n0, err := rw.Read().Waiting(ctx)
	require.NoError(t, err)
	assert.Zero(t, n0, "granted readers leave the waiter set")
}

// Waiters whose Client no longer listens on its channel (here its process
// died: its connections closed, and the server closed its subscription)
// are passed over by the release that would grant them and forgotten, and
// the live writer behind them is granted the lock by that release: behind
// a dead writer, or behind a dead reader, which a write release would grant
// first. With the hand-off lease and the dead waiters' leases of an hour,
// the live writer would otherwise wait for an hour. Seventy dead writers
// of one Client: the first found dead takes the others with it (rw_forget),
// where one a turn would stop after the release's 64 turns and leave the
// live writer to its own timer. (The readers are all looked at in one
// turn, however many.) Seventy writers of seventy Clients that died
// (processes that died at once): from the second Client found dead on,
// the writers of every Client that no longer listens go at once
// (rw_forget, ds_deaf), where one Client a turn would stop in the same
// way. Seventy writers whose registrations ended while the
// server still counts their Client as listening (a process that stopped
// with its connections open: unseen; their registrations made to end as
// time would end them): from the second on, every writer whose
// registration ended leaves the queue at once (rw_first_writer), where one
// a turn would stop after 64 in the same way.
func TestDeadWaitersArePassedOver(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ghost   string // the side of the waiters that die
		n       int    // how many of them
		ended   bool   // their registrations ended, their Client seems to listen
		clients int    // the dead waiters' Clients
	}{{"reader", "r", 1, false, 1}, {"writer", "w", 1, false, 1}, {"70 writers", "w", 70, false, 1},
		{"70 writers of 70 Clients", "w", 70, false, 70}, {"70 writers ended", "w", 70, true, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			holder, dead, rw, rd, rn := vanishing(t, time.Hour)
			others, rothers := make([]*distsync.Client, tc.clients-1), make([]*rwlock.RWLock, tc.clients-1)
			for i := range others {
				others[i] = dstest.Client(t)
				rothers[i] = newRW(t, others[i], rw.Name())
				rwlock.Tune(rothers[i], time.Hour)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			held, err := rw.Write().TryLock(ctx, 0, time.Hour)
			require.NoError(t, err)
			set, errc, gotNext := ghostAhead(t, ctx, holder, rw, rd, rn, tc.ghost, tc.n, time.Hour, rothers...)
			require.Equal(t, int64(1), dstest.Listeners(t, holder, channelOf(rw, dead)), "the dead waiters' Client listened")
			order := set // the ghosts first: the readers' set holds them alone
			if tc.ghost == "w" {
				order = "wqueue" // the writers in arrival order
			}
			rc := holder.Rueidis()
			ghosts, err := rc.Do(ctx, rc.B().Zrange().Key(rw.Write().Key()+":"+order).Min("0").Max(fmt.Sprint(tc.n-1)).Build()).AsStrSlice()
			require.NoError(t, err)
			if tc.ended {
				unseen(t, holder, dead, rw)
			} else {
				dstest.Crash(dead)
			}
			for _, c := range others {
				dstest.Crash(c)
			}
			for range tc.n {
				require.ErrorIs(t, <-errc, distsync.ErrClosed)
			}
			if tc.ended {
				dstest.EndRegistrations(t, holder, rw.Write().Key()+":"+set, ghosts)
			} else {
				for _, c := range append(others, dead) {
					dstest.WaitUnsubscribed(t, holder, channelOf(rw, c))
				}
			}

			require.NoError(t, rw.Write().Unlock(held))
			var w context.Context
			select {
			case w = <-gotNext:
			case <-time.After(20 * time.Second):
				t.Fatal("the live writer waits behind the dead waiters")
			}
			k, err := rn.Write().HoldCount(w)
			require.NoError(t, err)
			assert.Equal(t, 1, k, "the live writer holds")
			waitForWaiters(t, holder, rw, set, 0) // the dead waiters are forgotten
			require.NoError(t, rn.Write().Unlock(w))
		})
	}
}

// A waiter that spins (WithSpin) listens on no channel, and says so: a
// release grants it the lock as it grants a waiter that listens, and it
// finds the grant when it polls. It is not passed over for the writer
// behind it, whose Client listens.
func TestSpinningWaiterIsGranted(t *testing.T) {
	holder, spinner, rw, rs, rn := vanishing(t, time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	held, err := rw.Write().TryLock(ctx, 0, time.Hour)
	require.NoError(t, err)
	spun := holdAway(t, distsync.WithSpin(ctx, distsync.Spin{Min: time.Millisecond, Max: 5 * time.Millisecond}), rs.Write())
	waitForWaiters(t, holder, rw, "wwaiters", 1)
	require.Zero(t, dstest.Listeners(t, holder, channelOf(rw, spinner)), "a spinning waiter's Client listens on no channel")
	gotNext := holdAway(t, ctx, rn.Write())
	waitForWaiters(t, holder, rw, "wwaiters", 2)

	require.NoError(t, rw.Write().Unlock(held))
	var w context.Context
	select {
	case w = <-spun:
	case <-gotNext:
		t.Fatal("the writer behind the spinning one was granted the lock first")
	}
	k, err := rs.Write().HoldCount(w)
	require.NoError(t, err)
	assert.Equal(t, 1, k, "the spinning writer holds")
	waitForWaiters(t, holder, rw, "wwaiters", 1) // the writer behind it still waits
	require.NoError(t, rs.Write().Unlock(w))
	w = <-gotNext
	require.NoError(t, rn.Write().Unlock(w))
}

// A grant to a waiter that vanished without the server knowing (its
// process stopped with its connections open: unseen) moves on within the
// hand-off lease: the
// writer the grant passes over is nudged, so it bounds its sleep by the
// hand-off lease instead of the holder's watchdog lease (30 s), and holds
// once the vanished waiter's hold lapses, whether that waiter was a reader
// (a write release grants the readers) or a writer (the next writer).
func TestGrantToVanishedWaiterMovesOnWithinHandoffLease(t *testing.T) {
	const hl = 300 * time.Millisecond
	for _, tc := range []struct {
		name  string
		ghost string // the side of the waiter that vanishes
	}{{"reader", "r"}, {"writer", "w"}} {
		t.Run(tc.name, func(t *testing.T) {
			holder, gone, rw, rg, rn := vanishing(t, hl)
			ctx := context.Background()
			held, err := rw.Write().Lock(ctx)
			require.NoError(t, err)
			// The vanished writer registers first: the oldest writer is
			// the one a release grants. A vanished reader is granted with
			// every other waiting reader.
			_, errc, gotNext := ghostAhead(t, ctx, holder, rw, rg, rn, tc.ghost, 1, 0)
			unseen(t, holder, gone, rw)
			require.ErrorIs(t, <-errc, distsync.ErrClosed)

			nudges := acquire.Counters().Nudged.Load()
			start := time.Now()
			require.NoError(t, rw.Write().Unlock(held))
			w := <-gotNext
			// The bound is the hand-off lease; the margin covers a loaded
			// machine. Without the nudge the next writer would sleep until
			// the retry time of its refusal: the holder's watchdog lease.
			assert.Less(t, time.Since(start), hl+3*time.Second, "the next writer holds within the hand-off lease")
			assert.Greater(t, acquire.Counters().Nudged.Load(), nudges, "nudged by the grant")
			k, err := rn.Write().HoldCount(w)
			require.NoError(t, err)
			assert.Equal(t, 1, k, "the next writer holds")
			require.NoError(t, rn.Write().Unlock(w))
		})
	}
}

// A writer granted ahead of waiting readers (writer preference) that
// vanished delays them by at most the hand-off lease: with no writer after
// it, the readers are nudged by the grant, so they bound their sleep by the
// hand-off lease instead of the retry time of their refusal (the holder's
// watchdog lease, 30 s), and hold once the vanished writer's hold lapses.
// By default (reader preference) the release grants the waiting readers
// instead, and a reader that comes after the writer's grant is refused with
// the grant's hand-off lease as its retry time.
func TestVanishedWriterGrantedAheadOfReadersDelaysThemByHandoffLease(t *testing.T) {
	const hl = 500 * time.Millisecond
	for _, prefer := range []bool{true, false} {
		t.Run(fmt.Sprintf("prefer=%v", prefer), func(t *testing.T) {
			var opts []rwlock.Option
			if prefer {
				opts = append(opts, rwlock.PreferWriters())
			}
			holder, gone, rw, rg, ro := vanishing(t, hl, opts...)
			ctx := context.Background()
			held, err := rw.Write().Lock(ctx)
			require.NoError(t, err)
			errc := lockAway(ctx, rg.Write())
			waitForWaiters(t, holder, rw, "wwaiters", 1)
			// Readers on two Clients, the holder's and another: each
			// Client's readers must learn of the grant.
			got := readAway(t, ctx, rw, ro)
			waitForWaiters(t, holder, rw, "rwaiters", 2)
			unseen(t, holder, gone, rw)
			require.ErrorIs(t, <-errc, distsync.ErrClosed)

			start := time.Now()
			require.NoError(t, rw.Write().Unlock(held))
			for range 2 {
				r := <-got
				// The bound is the hand-off lease, five times over for a
				// loaded machine; without the nudge the readers would
				// sleep until the holder's watchdog lease (30 s) ends.
				assert.Less(t, time.Since(start), 5*hl, "the readers hold within the hand-off lease")
				require.NoError(t, r.rw.Read().Unlock(r.ctx))
			}
		})
	}
}

// A read grant to a reader that vanished delays a writer that came after
// the grant by at most the hand-off lease: the other reader granted with it
// confirms its full lease, so the writer's refusal says to retry at the end
// of that lease (the watchdog lease, 30 s); when that reader releases while
// the vanished reader's hand-off hold is left, the release nudges the
// writer, so it holds once that hold lapses.
func TestVanishedReaderGrantDelaysLaterWriterByHandoffLease(t *testing.T) {
	const hl = 3 * time.Second // see writerAfterVanishedReaderGrant
	// The bound is the hand-off lease, with a margin for a loaded machine;
	// without the nudge the writer would sleep until the retry time of its
	// refusal: the live reader's watchdog lease (30 s).
	assert.Less(t, writerAfterVanishedReaderGrant(t, hl, false), hl+5*time.Second, "the writer holds within the hand-off lease")
}

// As above, with a writer that vanished waiting first in line: the release
// that leaves only the vanished reader's hand-off hold nudges the two
// writers first in line, not the oldest alone, so the live writer after the
// vanished one holds within a few hand-off leases. Before, only the
// vanished writer was nudged, and the live one slept until the retry time
// of its refusal: the live reader's watchdog lease (30 s).
func TestVanishedReaderGrantAndWriterDelayLaterWriterByHandoffLease(t *testing.T) {
	const hl = 3 * time.Second
	// The vanished reader's hold lapses within hl; the live writer's
	// attempt then may grant the vanished writer first, whose hold lapses
	// within hl more: three hand-off leases, with a margin for a loaded
	// machine, against the 30 s of the live reader's lease.
	assert.Less(t, writerAfterVanishedReaderGrant(t, hl, true), 3*hl+5*time.Second, "the writer holds within a few hand-off leases")
}

// writerAfterVanishedReaderGrant has a writer's release grant the read lock
// to a reader whose Client vanished and to a live one, which confirms its
// full lease; then a live writer waits (after a writer whose Client
// vanished too, with vanishedWriter) and the live reader releases, leaving
// the vanished reader's hand-off hold. It returns how long after the
// writer's release the live writer held. hl must be long enough for the
// steps between the grant and the live reader's release to end before the
// vanished reader's hold lapses on a loaded machine (checked).
func writerAfterVanishedReaderGrant(t *testing.T, hl time.Duration, vanishedWriter bool) time.Duration {
	holder, gone, rw, rg, ro := vanishing(t, hl)
	ctx := context.Background()
	held, err := rw.Write().Lock(ctx)
	require.NoError(t, err)
	errc := lockAway(ctx, rg.Read())
	got := holdAway(t, ctx, rw.Read())
	waitForWaiters(t, holder, rw, "rwaiters", 2)
	unseen(t, holder, gone, rw)
	require.ErrorIs(t, <-errc, distsync.ErrClosed)
	start := time.Now()
	require.NoError(t, rw.Write().Unlock(held))
	r := <-got
	require.Eventually(t, func() bool {
		ttl, err := rw.Read().TTL(ctx)
		return err == nil && ttl > hl
	}, 5*time.Second, 10*time.Millisecond, "the live reader confirms its full lease")
	writers := int64(1)
	if vanishedWriter {
		gone2 := dstest.Client(t)
		rg2 := newRW(t, gone2, rw.Name())
		rwlock.Tune(rg2, hl)
		errc := lockAway(ctx, rg2.Write())
		waitForWaiters(t, holder, rw, "wwaiters", 1)
		unseen(t, holder, gone2, rw)
		require.ErrorIs(t, <-errc, distsync.ErrClosed)
		writers++
	}
	gotW := holdAway(t, ctx, ro.Write())
	waitForWaiters(t, holder, rw, "wwaiters", writers)
	require.NoError(t, rw.Read().Unlock(r))
	n, err := rw.Read().Holders(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n, "the vanished reader's hold is left (else the machine is too slow for this test)")
	w := <-gotW
	elapsed := time.Since(start)
	require.NoError(t, ro.Write().Unlock(w))
	return elapsed
}

// A writer that vanished while waiting (writer preference) holds new
// readers back only until it would have tried again by itself, plus the
// hand-off lease for its attempt to arrive: its registration ends then, not
// a waiter window (30 s by default) later. Here the reader ahead of it lets
// its explicit lease lapse, so no release hands the lock on: the readers
// that came after the writer learn of it only from the writer's registration.
func TestVanishedWaitingWriterDelaysReadersByHandoffLease(t *testing.T) {
	const (
		hl    = 500 * time.Millisecond
		lease = 2 * time.Second // the first reader's, which lapses
	)
	holder, gone, rw, rg, ro := vanishing(t, hl, rwlock.PreferWriters())
	ctx := context.Background()
	_, err := ro.Read().TryLock(ctx, 0, lease)
	require.NoError(t, err)
	errc := lockAway(ctx, rg.Write())
	waitForWaiters(t, holder, rw, "wwaiters", 1)
	unseen(t, holder, gone, rw)
	require.ErrorIs(t, <-errc, distsync.ErrClosed)

	start := time.Now()
	r, err := rw.Read().Lock(ctx)
	require.NoError(t, err)
	// The writer would have tried again when the first reader's lease
	// lapsed: the readers hold within the hand-off lease after that (the
	// margin covers a loaded machine). Before, they waited for the end of
	// the writer's registration: the lease and a waiter window (30 s).
	assert.Less(t, time.Since(start), lease+hl+5*time.Second, "the reader holds within the hand-off lease of the writer's retry time")
	require.NoError(t, rw.Read().Unlock(r))
}

// Two writers that vanished while waiting (writer preference), the older
// granted the lock by a release, delay the readers waiting behind them by
// about twice the hand-off lease: the grant nudges the readers as well as
// the second writer, whose registration it cuts to the hand-off lease and
// the time to come back, so the readers find both gone. Before, the second
// writer kept the readers from being nudged, and its registration held them
// back until the holder's watchdog lease (30 s) and a waiter window (30 s)
// ended.
func TestTwoVanishedWritersDelayReadersByHandoffLease(t *testing.T) {
	const hl = 500 * time.Millisecond
	holder, gone, rw, rg, ro := vanishing(t, hl, rwlock.PreferWriters())
	ctx := context.Background()
	held, first, second := twoWritersWait(t, ctx, holder, rw, rg)
	got := readAway(t, ctx, rw, ro)
	waitForWaiters(t, holder, rw, "rwaiters", 2)
	unseen(t, holder, gone, rw)
	require.ErrorIs(t, <-first, distsync.ErrClosed)
	require.ErrorIs(t, <-second, distsync.ErrClosed)

	start := time.Now()
	require.NoError(t, rw.Write().Unlock(held))
	for range 2 {
		r := <-got
		// The bound is twice the hand-off lease; the margin covers a
		// loaded machine.
		assert.Less(t, time.Since(start), 2*hl+5*time.Second, "the readers hold within twice the hand-off lease")
		require.NoError(t, r.rw.Read().Unlock(r.ctx))
	}
}

// twoWritersWait write-locks rw and has two writers of rg wait behind it,
// queued in order; it returns the hold and each waiter's Lock error.
func twoWritersWait(t *testing.T, ctx context.Context, holder *distsync.Client, rw, rg *rwlock.RWLock) (held context.Context, first, second <-chan error) {
	held, err := rw.Write().Lock(ctx)
	require.NoError(t, err)
	first = lockAway(ctx, rg.Write())
	waitForWaiters(t, holder, rw, "wwaiters", 1)
	second = lockAway(ctx, rg.Write())
	waitForWaiters(t, holder, rw, "wwaiters", 2)
	return held, first, second
}

// ghostAhead queues n waiters of rg of the side ghost ('r' or 'w', with
// the explicit lease, 0 for the watchdog's), the waiters to vanish,
// registered in this order (with more handles, of other Clients, waiter i
// on the i-th of rg and more, in turn), then a writer of rn behind them, whose hold
// arrives on gotNext. It returns the waiter set of the ghosts' side and
// where each ghost's Lock error arrives.
func ghostAhead(t *testing.T, ctx context.Context, holder *distsync.Client, rw, rg, rn *rwlock.RWLock, ghost string, n int, lease time.Duration, more ...*rwlock.RWLock) (set string, errc <-chan error, gotNext <-chan context.Context) {
	t.Helper()
	rgs := append([]*rwlock.RWLock{rg}, more...)
	set, writers := "rwaiters", int64(1)
	if ghost == "w" {
		set, writers = "wwaiters", int64(n+1)
	}
	e := make(chan error, n)
	for i := range n {
		side := rgs[i%len(rgs)].Read()
		if ghost == "w" {
			side = rgs[i%len(rgs)].Write()
		}
		go func() {
			_, err := side.TryLock(ctx, distsync.Forever, lease)
			e <- err
		}()
		waitForWaiters(t, holder, rw, set, int64(i+1)) // registered in this order
	}
	gotNext = holdAway(t, ctx, rn.Write())
	waitForWaiters(t, holder, rw, "wwaiters", writers)
	return set, e, gotNext
}

// channelOf is the channel of rw where releases tell the waiters of c.
func channelOf(rw *rwlock.RWLock, c *distsync.Client) string {
	return rw.Write().Key() + ":ch:" + c.ID()
}

// unseen crashes c (dstest.Crash) as a process that stopped with its
// connections open (dstest.StandIn): the server cannot tell, and a release
// treats c's waiters on rw as live.
func unseen(t *testing.T, holder, c *distsync.Client, rw *rwlock.RWLock) {
	t.Helper()
	dstest.Crash(c)
	dstest.StandIn(t, holder, channelOf(rw, c))
}

// vanishing returns handles on one lock with the hand-off lease hl on three
// Clients: the holder's, one to crash (unseen, or dstest.Crash) and another.
func vanishing(t *testing.T, hl time.Duration, opts ...rwlock.Option) (holder, gone *distsync.Client, rw, rg, ro *rwlock.RWLock) {
	holder, gone, other := dstest.Client(t), dstest.Client(t), dstest.Client(t)
	name := dstest.Name(t)
	rw, rg, ro = newRW(t, holder, name, opts...), newRW(t, gone, name, opts...), newRW(t, other, name, opts...)
	for _, x := range []*rwlock.RWLock{rw, rg, ro} {
		rwlock.Tune(x, hl)
	}
	return holder, gone, rw, rg, ro
}

// lockAway locks side in the background and sends Lock's error: a waiter
// whose Client is to vanish.
func lockAway(ctx context.Context, side *rwlock.Side) <-chan error {
	errc := make(chan error, 1)
	go func() {
		_, err := side.Lock(ctx)
		errc <- err
	}()
	return errc
}

// holdAway locks side in the background and sends the hold once taken.
func holdAway(t *testing.T, ctx context.Context, side *rwlock.Side) <-chan context.Context {
	got := make(chan context.Context, 1)
	go func() {
		h, err := side.Lock(ctx)
		assert.NoError(t, err)
		got <- h
	}()
	return got
}

// readHold is a read hold readAway took: the handle and the hold's context.
type readHold struct {
	rw  *rwlock.RWLock
	ctx context.Context
}

// readAway takes the read lock of each of rws in the background and sends
// each hold once taken.
func readAway(t *testing.T, ctx context.Context, rws ...*rwlock.RWLock) <-chan readHold {
	got := make(chan readHold, len(rws))
	for _, x := range rws {
		go func() {
			r, err := x.Read().Lock(ctx)
			assert.NoError(t, err)
			got <- readHold{x, r}
		}()
	}
	return got
}

// A waiter that gives up gives back what a release granted it meanwhile: a
// waiter that spins is granted the lock but not told, and its leaving
// frees the lock at once, not when the hand-off lease lapses.
func TestLeavingWaiterGivesBackItsGrant(t *testing.T) {
	c := dstest.Client(t)
	rw := newRW(t, c, dstest.Name(t))
	ctx := context.Background()
	w, err := rw.Write().Lock(ctx)
	require.NoError(t, err)
	wctx, cancel := context.WithCancel(distsync.WithSpin(ctx, distsync.Spin{Min: time.Minute, Max: time.Minute}))
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := rw.Read().Lock(wctx)
		errc <- err
	}()
	waitForWaiters(t, c, rw, "rwaiters", 1)
	require.NoError(t, rw.Write().Unlock(w))
	n, err := rw.Read().Holders(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n, "the release granted the waiting reader")
	cancel()
	require.ErrorIs(t, <-errc, context.Canceled)
	n, err = rw.Read().Holders(ctx)
	require.NoError(t, err)
	assert.Zero(t, n, "the grant was given back")
	w, err = rw.Write().TryLock(ctx, 0, 0)
	require.NoError(t, err, "the lock is free")
	require.NoError(t, rw.Write().Unlock(w))
}

// Waiting writers are granted the lock in the order they first registered.
func TestWritersGrantedInOrder(t *testing.T) {
	c := dstest.Client(t)
	rw := newRW(t, c, dstest.Name(t))
	ctx := context.Background()
	held, err := rw.Write().Lock(ctx)
	require.NoError(t, err)
	const n = 5
	order := make(chan int, n)
	var wg sync.WaitGroup
	defer wg.Wait() // each writer's Unlock is done before the Client closes
	for i := range n {
		wg.Go(func() {
			w, err := rw.Write().Lock(ctx)
			if !assert.NoError(t, err) {
				order <- -1
				return
			}
			order <- i
			assert.NoError(t, rw.Write().Unlock(w))
		})
		waitForWaiters(t, c, rw, "wwaiters", int64(i+1))
	}
	require.NoError(t, rw.Write().Unlock(held))
	for i := range n {
		assert.Equal(t, i, <-order, "granted in the order of registration")
	}
}

// A grant goes on the channel of the waiter's Client only: other Clients
// do not even receive it.
func TestGrantGoesToTheWaitersClient(t *testing.T) {
	holder, waiter := dstest.Client(t), dstest.Client(t)
	name := dstest.Name(t)
	rw, rwr := newRW(t, holder, name), newRW(t, waiter, name)
	ctx := context.Background()
	prefix := rw.Write().Key() + ":ch"
	rc := holder.Rueidis()
	got := make(chan [2]string, 16)
	subbed := make(chan struct{})
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		rc.Receive(sctx, rc.B().Psubscribe().Pattern(prefix+"*").Build(), func(m rueidis.PubSubMessage) {
			got <- [2]string{m.Channel, m.Message}
		})
	}()
	// The subscription is up once a message published after it arrives.
	go func() {
		for {
			select {
			case <-subbed:
				return
			case <-time.After(5 * time.Millisecond):
				rc.Do(ctx, rc.B().Publish().Channel(prefix+":probe").Message("probe").Build())
			}
		}
	}()
	for m := range got {
		if m[1] == "probe" {
			close(subbed)
			break
		}
	}
	w, err := rw.Write().Lock(ctx)
	require.NoError(t, err)
	rd := holdAway(t, ctx, rwr.Read())
	waitForWaiters(t, holder, rw, "rwaiters", 1)
	require.NoError(t, rw.Write().Unlock(w))
	r := <-rd
	for m := range got {
		if m[1] == "probe" {
			continue
		}
		assert.Equal(t, prefix+":"+waiter.ID(), m[0], "on the waiter's Client's channel")
		assert.Regexp(t, `^g:`, m[1])
		break
	}
	require.NoError(t, rwr.Read().Unlock(r))
}

// Two writers that vanished while waiting, the older granted the lock by a
// release, delay a live writer waiting after them by about the hand-off
// lease: the grant nudges the two writers after the grantee, so the live
// third tries again within the hand-off lease and takes the lock the
// grantee let lapse. Before, only the second was nudged, and the third
// slept until the retry time of its refusal: the holder's watchdog lease
// (30 s).
func TestTwoVanishedWritersDelayLiveWriterByHandoffLease(t *testing.T) {
	const hl = 500 * time.Millisecond
	holder, gone, rw, rg, ro := vanishing(t, hl)
	ctx := context.Background()
	held, first, second := twoWritersWait(t, ctx, holder, rw, rg)
	got := holdAway(t, ctx, ro.Write())
	waitForWaiters(t, holder, rw, "wwaiters", 3)
	unseen(t, holder, gone, rw)
	require.ErrorIs(t, <-first, distsync.ErrClosed)
	require.ErrorIs(t, <-second, distsync.ErrClosed)

	start := time.Now()
	require.NoError(t, rw.Write().Unlock(held))
	w := <-got
	// The bound is about the hand-off lease; the margin covers a loaded
	// machine, and is a sixth of the delay before.
	assert.Less(t, time.Since(start), hl+4*time.Second, "the live writer holds within the hand-off lease")
	require.NoError(t, ro.Write().Unlock(w))
}
