package distsync_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/core"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/multilock"
	"github.com/distsync/distsync/redlock"
	"github.com/distsync/distsync/watchdog"
)

// The lock contract, written once and run over every lock kind: what a
// distsync.Locker promises (Locker's doc, the kinds' TryLock, Unlock,
// Extend and Token docs) whatever the primitive behind it.
//
//   - reentrancy: a hold's context re-enters, counted, while another owner
//     waits; releasing the inner acquisition leaves the outer; the last
//     release lets the waiter in.
//   - tokens: fencing tokens strictly increase from hold to hold, across
//     Clients and when the name's counter expired; a re-entry keeps its
//     hold's token.
//   - explicit-lease: the lease is the hold context's deadline and the
//     server's TTL; it is not renewed, ends the context with
//     ErrLeaseExpired and lets another owner in; a watchdog hold has no
//     deadline.
//   - extend: Extend moves an explicit lease on the server and in the
//     context, refuses a watchdog acquisition and bad leases, and does not
//     revive an ended lease.
//   - close: Client.Close ends every hold's context with ErrClosed, gives
//     the holds back at once, returns ErrClosed to a waiter and to every
//     later TryLock.
//   - misuse: Unlock of no hold, of the same hold twice, of another lock's
//     hold or through another Client is ErrNotHeld and releases nothing;
//     Unlock after the hold's parent context ended is no error; a busy lock
//     refuses TryLock(wait 0) with ErrNotAcquired; bad durations and names
//     are ErrInvalidArgument and ErrInvalidName, and MinLease is accepted.
//
// A kind that lacks a method a contract uses (HoldCount, Token, Extend, TTL)
// says why in its except entry; a kind that has the method is checked, and
// an exception for a method a kind has is an error (see offers).

// contractKind is one lock kind the contract runs over.
type contractKind struct {
	name string
	// masters is how many Clients one lock spans (a redlock's masters; 0
	// means one). Each Client of a lock is on its own keyspace.
	masters int
	// members makes the locks a lock of name is made of, on cs: for a plain
	// kind, the lock itself.
	members func(cs []*distsync.Client, name string) ([]distsync.Locker, error)
	// compose makes a lock of its members; nil for a plain kind.
	compose func(members []distsync.Locker) (distsync.Locker, error)
	// rival names the kind whose hold of the name a hold of this kind keeps
	// out, when it is not this kind itself: readers share, writers do not.
	rival string
	// except says, for each contract (tokens, extend: skipped) or method
	// (holdcount, ttl) or check (names) that does not apply to the kind, why.
	except map[string]string
}

// composedExcept are the exceptions of the composed kinds, multilock and
// redlock: a composed hold is its members' holds, and what counts, fences
// and leases is each member (reached through Members).
var composedExcept = map[string]string{
	"holdcount": "a composed hold counts re-entries in each member (HoldCount of Members)",
	"tokens":    "a composed hold has no token of its own: each member's is its own (Token of Members)",
	"extend":    "a composed hold's lease is its members' (multilock) or its validity (redlock): no Extend",
	"ttl":       "the lease left is each member's (TTL of Members)",
	"names":     "a composed lock has no name: its members are made, and refuse bad names, as their kinds",
}

// contractKinds are the lock kinds: the exclusive kinds of dstest.Kinds, the
// read side of the read-write lock (shared: its rival is a writer), and a
// multilock and a Redlock over mutexes.
var contractKinds = append(plainKinds(), []contractKind{
	{name: "rwlock-read", rival: "rwlock-write", members: func(cs []*distsync.Client, name string) ([]distsync.Locker, error) {
		rw, err := cs[0].RWLock(name)
		if err != nil {
			return nil, err
		}
		return []distsync.Locker{rw.Read()}, nil
	}},
	{name: "multilock", except: composedExcept, members: func(cs []*distsync.Client, name string) ([]distsync.Locker, error) {
		m, err := cs[0].Mutex(name + "-m")
		if err != nil {
			return nil, err
		}
		f, err := cs[0].FairLock(name + "-f")
		if err != nil {
			return nil, err
		}
		return []distsync.Locker{m, f}, nil
	}, compose: func(ls []distsync.Locker) (distsync.Locker, error) { return multilock.New(ls) }},
	{name: "redlock", masters: 3, except: composedExcept, members: func(cs []*distsync.Client, name string) ([]distsync.Locker, error) {
		var ls []distsync.Locker
		for _, c := range cs {
			m, err := c.Mutex(name)
			if err != nil {
				return nil, err
			}
			ls = append(ls, m)
		}
		return ls, nil
	}, compose: func(ls []distsync.Locker) (distsync.Locker, error) { return redlock.New(ls) }},
}...)

// plainKinds are the kinds of dstest.Kinds, each a lock of its own.
func plainKinds() []contractKind {
	var ks []contractKind
	for _, k := range dstest.Kinds {
		ks = append(ks, contractKind{name: k.Name, members: func(cs []*distsync.Client, name string) ([]distsync.Locker, error) {
			l, err := k.New(cs[0], name)
			if err != nil {
				return nil, err
			}
			return []distsync.Locker{l}, nil
		}})
	}
	return ks
}

// clients returns new Clients for one side of a contract (the lock under
// test, or its rival's process): one per master, master i on keyspace i+1
// (keyspaces of one server stand for masters).
func (k contractKind) clients(t *testing.T) []*distsync.Client {
	t.Helper()
	if k.masters == 0 {
		return []*distsync.Client{dstest.Client(t)}
	}
	cs := make([]*distsync.Client, k.masters)
	for i := range cs {
		cs[i] = dstest.Client(t, func(o *distsync.Options) { o.DB = 1 + i })
	}
	return cs
}

// open returns the lock of name on cs.
func (k contractKind) open(t *testing.T, cs []*distsync.Client, name string) distsync.Locker {
	t.Helper()
	ls, err := k.members(cs, name)
	require.NoError(t, err)
	if k.compose == nil {
		return ls[0]
	}
	l, err := k.compose(ls)
	require.NoError(t, err)
	return l
}

// waiting returns how many wait for the lock of name on cs, as its members
// count them.
func (k contractKind) waiting(t *testing.T, cs []*distsync.Client, name string) int {
	t.Helper()
	ls, err := k.members(cs, name)
	require.NoError(t, err)
	n := 0
	for _, l := range ls {
		w, err := l.(interface {
			Waiting(context.Context) (int, error)
		}).Waiting(context.Background())
		require.NoError(t, err)
		n += w
	}
	return n
}

// rivalOf returns the kind whose hold a hold of k keeps out.
func rivalOf(t *testing.T, k contractKind) contractKind {
	t.Helper()
	if k.rival == "" {
		return k
	}
	for _, r := range contractKinds {
		if r.name == k.rival {
			return r
		}
	}
	t.Fatalf("%s: no kind %q", k.name, k.rival)
	return k
}

// offers returns l as an I, and whether it is one, failing the test when
// the table disagrees: l lacks the method what and k states no exception
// for it, or l has it and k states one.
func offers[I any](t *testing.T, k contractKind, what string, l distsync.Locker) (I, bool) {
	t.Helper()
	i, ok := l.(I)
	why, excepted := k.except[what]
	switch {
	case ok && excepted:
		t.Errorf("%s has %s, yet the table excepts it: %s", k.name, what, why)
	case !ok && !excepted:
		t.Errorf("%s lacks %s, and the table says not why", k.name, what)
	}
	return i, ok
}

type (
	holdCounter interface {
		HoldCount(context.Context) (int, error)
	}
	tokener interface {
		Token(context.Context) (int64, error)
	}
	extender interface {
		Extend(context.Context, time.Duration) error
	}
	ttler interface {
		TTL(context.Context) (time.Duration, error)
	}
)

// contract is one subtest of the suite: l is the lock of name on the
// Clients cs, rival the lock of that name that a hold of l keeps out, on
// Clients of their own (another process); k makes more of either.
type contract struct {
	t          *testing.T
	k, rk      contractKind
	cs, rivals []*distsync.Client
	name       string
	l, rival   distsync.Locker
}

// refused asserts that the rival does not get the lock now.
func (c *contract) refused(why string) {
	c.t.Helper()
	_, err := c.rival.TryLock(context.Background(), 0, 0)
	assert.ErrorIs(c.t, err, distsync.ErrNotAcquired, why)
}

// free asserts that the rival gets the lock within wait, and releases it.
func (c *contract) free(wait time.Duration, why string) {
	c.t.Helper()
	held, err := c.rival.TryLock(context.Background(), wait, 0)
	require.NoError(c.t, err, why)
	require.NoError(c.t, c.rival.Unlock(held))
}

// tooShort are leases under MinLease, refused as misuse.
var tooShort = []time.Duration{30, time.Millisecond, 2 * time.Millisecond, distsync.MinLease - 1}

// TestLockContract runs the lock contract (see contractKind) over every
// lock kind, each contract a parallel subtest of each kind.
func TestLockContract(t *testing.T) {
	t.Parallel()
	contracts := []struct {
		name string
		run  func(c *contract)
	}{
		{"reentrancy", reentrancy},
		{"tokens", tokens},
		{"explicit-lease", explicitLease},
		{"extend", extend},
		{"close", closeEndsHolds},
		{"parent-ends", parentEnds},
		{"misuse", misuse},
	}
	for _, k := range contractKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			for _, ct := range contracts {
				t.Run(ct.name, func(t *testing.T) {
					t.Parallel()
					if why, ok := k.except[ct.name]; ok {
						t.Skip(why)
					}
					rk := rivalOf(t, k)
					c := &contract{t: t, k: k, rk: rk, cs: k.clients(t), rivals: rk.clients(t), name: dstest.Name(t)}
					c.l, c.rival = k.open(t, c.cs, c.name), rk.open(t, c.rivals, c.name)
					ct.run(c)
				})
			}
		})
	}
}

// parentEnds: a hold whose parent context ends ends with the parent's
// cause, as any context derived from it does, and is given back in the
// background: the rival then gets the lock. The release that the parent's
// end starts must not end the context first with a cause of its own: many
// re-entries of one hold (each a context derived from it), so that some of
// their releases start before the cancellation of the hold reaches them.
func parentEnds(c *contract) {
	t, l := c.t, c.l
	why := errors.New("the caller's reason")
	parent, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	held, err := l.TryLock(parent, 0, 0)
	require.NoError(t, err)
	holds := []context.Context{held}
	for range 100 {
		in, err := l.TryLock(held, 0, 0)
		require.NoError(t, err)
		holds = append(holds, in)
	}
	cancel(why)
	for i, h := range holds {
		<-h.Done()
		assert.ErrorIs(t, context.Cause(h), why, "acquisition %d of %d", i+1, len(holds))
	}
	c.free(10*time.Second, "given back once the parent ended")
}

// reentrancy: a hold's context re-enters while another owner waits (a fair
// lock's queue does not stop its holder); each acquisition is released on
// its own, the inner first, and the lock stays held until the last.
func reentrancy(c *contract) {
	t, l := c.t, c.l
	ctx := context.Background()
	outer, err := l.TryLock(ctx, 0, 0)
	require.NoError(t, err)

	// Another owner waits. Its budget is only a bound for a failed test: it
	// is granted as soon as the hold is released.
	got := make(chan error, 1)
	go func() {
		h, err := c.rival.TryLock(ctx, time.Minute, 0)
		if err == nil {
			err = c.rival.Unlock(h)
		}
		got <- err
	}()
	require.Eventually(t, func() bool { return c.rk.waiting(t, c.rivals, c.name) >= 1 }, 20*time.Second, 5*time.Millisecond, "the rival waits")

	inner, err := l.TryLock(outer, 0, 0)
	require.NoError(t, err, "the holder re-enters, though another owner waits")
	count, counts := offers[holdCounter](t, c.k, "holdcount", l)
	holds := func(want int, why string) {
		t.Helper()
		if counts {
			n, err := count.HoldCount(outer)
			require.NoError(t, err)
			assert.Equal(t, want, n, why)
		}
	}
	holds(2, "two acquisitions")
	c.refused("held twice")

	require.NoError(t, l.Unlock(inner))
	assert.ErrorIs(t, context.Cause(inner), distsync.ErrReleased)
	require.NoError(t, outer.Err(), "releasing the inner acquisition leaves the outer")
	holds(1, "the outer acquisition is left")
	c.refused("the outer acquisition still holds")
	select {
	case err := <-got:
		t.Fatalf("the rival returned while the outer acquisition holds: %v", err)
	default:
	}

	require.NoError(t, l.Unlock(outer))
	assert.ErrorIs(t, context.Cause(outer), distsync.ErrReleased)
	holds(0, "released")
	require.NoError(t, <-got, "the last release lets the waiter in")
}

// tokens: each hold, taken in turn by two Clients, has a token greater than
// the one before; a re-entry has its hold's token; a released hold has
// none. Halfway the name's fencing counter is deleted, as when it expires
// with the name idle: tokens still increase.
func tokens(c *contract) {
	t := c.t
	ctx := context.Background()
	ls := []distsync.Locker{c.l, c.k.open(t, c.k.clients(t), c.name)}
	var last int64
	for i := range 10 {
		l := ls[i%2]
		tk, ok := offers[tokener](t, c.k, "tokens", l)
		require.True(t, ok)
		// The other Client released it just before: the wait is only a
		// bound for a failed test.
		held, err := l.TryLock(ctx, 10*time.Second, 0)
		require.NoError(t, err)
		tok, err := tk.Token(held)
		require.NoError(t, err)
		assert.Greater(t, tok, last, "hold %d", i)
		inner, err := l.TryLock(held, 0, 0)
		require.NoError(t, err)
		same, err := tk.Token(inner)
		require.NoError(t, err)
		assert.Equal(t, tok, same, "a re-entry keeps the hold's token")
		require.NoError(t, l.Unlock(inner))
		require.NoError(t, l.Unlock(held))
		_, err = tk.Token(held)
		assert.ErrorIs(t, err, distsync.ErrNotHeld, "a released hold has no token")
		last = tok
		if i == 4 {
			// The counter is lost (a restart without persistence): tokens
			// still increase, continuing from the server clock.
			rc := c.cs[0].Rueidis()
			keyed, ok := l.(interface{ Key() string })
			require.True(t, ok, "a kind with tokens names its key")
			fence := core.FenceOf(keyed.Key(), false)
			require.NotEmpty(t, fence, "the name's fencing counter")
			require.NoError(t, rc.Do(ctx, rc.B().Del().Key(fence).Build()).Error())
		}
	}
}

// explicitLease: an explicit lease is the hold context's deadline and the
// server's time to live, is never renewed, and when it ends the context
// ends with ErrLeaseExpired and another owner gets the lock.
func explicitLease(c *contract) {
	t, l := c.t, c.l
	ctx := context.Background()

	// Long enough that the checks end well inside it on a loaded machine.
	const long = 20 * time.Second
	before := time.Now()
	held, err := l.TryLock(ctx, 0, long)
	got := time.Now()
	require.NoError(t, err)
	d, ok := held.Deadline()
	require.True(t, ok, "an explicit lease is the context's deadline")
	// Ended by a local timer, which a busy process runs late, it ends the
	// drift margin and the watchdog's safety margin before the lease: the
	// request was sent before TryLock returned.
	assert.False(t, d.After(got.Add(long-core.Drift(long)-watchdog.DefaultSafetyMargin)),
		"deadline %v, want the safety margin before the lease's end", d)
	// A little before the server's end: for a Redlock, by the round's time
	// and the drift allowed for (about 0.2 s), which a loaded machine may
	// stretch; half the lease is a wide margin that the watchdog lease
	// (30 s) or no deadline would still miss.
	assert.False(t, d.After(before.Add(long)), "deadline %v after the lease's end", d)
	assert.True(t, d.After(before.Add(long/2)), "deadline %v, want about %v", d, before.Add(long))
	child, cancel := context.WithTimeout(held, time.Hour)
	cd, _ := child.Deadline()
	cancel()
	assert.Equal(t, d, cd, "a WithTimeout child keeps the hold's deadline")
	if tl, ok := offers[ttler](t, c.k, "ttl", l); ok {
		ttl, err := tl.TTL(ctx)
		require.NoError(t, err)
		assert.True(t, ttl > long/2 && ttl <= long, "TTL %v, want the lease left", ttl)
	}
	require.NoError(t, l.Unlock(held))

	held, err = l.TryLock(ctx, 0, 0)
	require.NoError(t, err)
	_, ok = held.Deadline()
	assert.False(t, ok, "a watchdog hold has no deadline")
	require.NoError(t, l.Unlock(held))

	// Short, so that the suite waits little for it to end; long enough that
	// a Redlock round on a loaded machine ends inside it (it grants only
	// while lease − elapsed − drift is positive).
	held, err = l.TryLock(ctx, 0, 500*time.Millisecond)
	require.NoError(t, err)
	// Renewed, it would hold on past the rival's wait: the watchdog lease
	// is 30 s.
	c.free(10*time.Second, "another owner gets the lock when the lease ends")
	<-held.Done()
	assert.ErrorIs(t, context.Cause(held), distsync.ErrLeaseExpired)
	assert.ErrorIs(t, l.Unlock(held), distsync.ErrNotHeld, "an expired hold is not released again")
}

// extend: Extend moves an explicit lease's end on the server and in the
// hold's context; it refuses a watchdog acquisition and leases under
// MinLease, and does not revive an ended lease.
func extend(c *contract) {
	t, l := c.t, c.l
	ctx := context.Background()
	e, ok := offers[extender](t, c.k, "extend", l)
	require.True(t, ok)

	const first = 500 * time.Millisecond
	held, err := l.TryLock(ctx, 0, first)
	require.NoError(t, err)
	before := time.Now()
	require.NoError(t, e.Extend(held, time.Minute))
	extended := time.Now()
	d, ok := held.Deadline()
	assert.True(t, ok && d.After(before.Add(30*time.Second)), "the context's deadline %v moved with the lease", d)
	assert.False(t, d.After(extended.Add(time.Minute-core.Drift(time.Minute)-watchdog.DefaultSafetyMargin)),
		"deadline %v, want the safety margin before the extended lease's end", d)
	if tl, ok := offers[ttler](t, c.k, "ttl", l); ok {
		ttl, err := tl.TTL(ctx)
		require.NoError(t, err)
		assert.Greater(t, ttl, 30*time.Second)
	}
	// The rival waits past the first lease's end (its wait starts after
	// it), and is refused: the server keeps the extended lease.
	_, err = c.rival.TryLock(ctx, 2*first, 0)
	assert.ErrorIs(t, err, distsync.ErrNotAcquired, "held past the first lease")
	require.NoError(t, held.Err(), "the context follows the extended lease")

	inner, err := l.TryLock(held, 0, 0)
	require.NoError(t, err)
	assert.ErrorIs(t, e.Extend(inner, time.Second), distsync.ErrInvalidArgument, "the watchdog renews a watchdog acquisition")
	require.NoError(t, l.Unlock(inner))
	for _, lease := range append([]time.Duration{0, -time.Second}, tooShort...) {
		assert.ErrorIs(t, e.Extend(held, lease), distsync.ErrInvalidArgument, "Extend(%v)", lease)
	}
	require.NoError(t, e.Extend(held, distsync.MinLease), "MinLease is a lease")
	if err := l.Unlock(held); err != nil { // MinLease may have passed
		assert.ErrorIs(t, err, distsync.ErrNotHeld)
	}

	held, err = l.TryLock(ctx, 0, 100*time.Millisecond)
	require.NoError(t, err)
	<-held.Done()
	assert.ErrorIs(t, e.Extend(held, time.Minute), distsync.ErrNotHeld, "an ended lease is not revived")
	// The context ends a little before the server's lease: the rival may
	// wait for the rest, far less than the revived minute.
	c.free(10*time.Second, "free once the lease ended")
}

// closeEndsHolds: Close gives back the Client's holds (a watchdog one, an
// explicit re-entry of it, and an explicit one alone), ends their contexts with ErrClosed, and returns
// ErrClosed to its waiter and to every later TryLock.
func closeEndsHolds(c *contract) {
	t, l := c.t, c.l
	ctx := context.Background()
	watchdog, err := l.TryLock(ctx, 0, 0)
	require.NoError(t, err)
	explicit, err := l.TryLock(watchdog, 0, time.Minute)
	require.NoError(t, err)
	// A hold with an explicit lease alone, which no watchdog knows of.
	alone := c.name + "-explicit"
	aloneHeld, err := c.k.open(t, c.cs, alone).TryLock(ctx, 0, time.Minute)
	require.NoError(t, err)

	// A waiter of the closing Clients, for a lock the rival holds.
	busy := c.name + "-busy"
	other := c.rk.open(t, c.rivals, busy)
	bctx, err := other.TryLock(ctx, 0, time.Minute)
	require.NoError(t, err)
	waiter := c.k.open(t, c.cs, busy)
	waited := make(chan error, 1)
	go func() {
		_, err := waiter.TryLock(ctx, distsync.Forever, 0)
		waited <- err
	}()
	require.Eventually(t, func() bool { return c.k.waiting(t, c.rivals, busy) >= 1 }, 20*time.Second, 5*time.Millisecond, "the waiter waits")

	for _, cl := range c.cs {
		cl.Close()
	}
	for _, h := range []context.Context{watchdog, explicit, aloneHeld} {
		require.Error(t, h.Err(), "the hold's context ended at Close")
		assert.ErrorIs(t, context.Cause(h), distsync.ErrClosed)
	}
	select {
	case err := <-waited:
		assert.ErrorIs(t, err, distsync.ErrClosed, "the waiter returns ErrClosed")
	case <-time.After(time.Minute): // a bound for a failed test only
		t.Fatal("the waiter did not return at Close")
	}
	c.free(0, "Close gave the hold back")
	ra := c.rk.open(t, c.rivals, alone)
	freed, err := ra.TryLock(ctx, 0, 0)
	require.NoError(t, err, "Close gave the explicit hold back")
	require.NoError(t, ra.Unlock(freed))
	_, err = l.TryLock(ctx, 0, 0)
	assert.ErrorIs(t, err, distsync.ErrClosed)
	require.NoError(t, other.Unlock(bctx))
}

// misuse: what a caller can get wrong is a typed error and changes nothing.
func misuse(c *contract) {
	t, l := c.t, c.l
	ctx := context.Background()
	assert.ErrorIs(t, l.Unlock(ctx), distsync.ErrNotHeld, "a context with no hold")

	held, err := l.TryLock(ctx, 0, 0)
	require.NoError(t, err)
	c.refused("TryLock(wait 0) of a held lock")
	foreign := c.k.open(t, c.cs, c.name+"-other")
	fctx, err := foreign.TryLock(ctx, 0, 0)
	require.NoError(t, err)
	assert.ErrorIs(t, l.Unlock(fctx), distsync.ErrNotHeld, "another lock's hold")
	require.NoError(t, foreign.Unlock(fctx))
	assert.ErrorIs(t, c.k.open(t, c.k.clients(t), c.name).Unlock(held), distsync.ErrNotHeld, "the same name, through another Client")
	require.NoError(t, held.Err())
	c.refused("a refused Unlock releases nothing")
	require.NoError(t, l.Unlock(held))
	assert.ErrorIs(t, l.Unlock(held), distsync.ErrNotHeld, "the same hold twice")
	c.free(0, "released")

	parent, cancel := context.WithCancel(ctx)
	held, err = l.TryLock(parent, 0, 0)
	require.NoError(t, err)
	cancel()
	require.Error(t, held.Err(), "the hold ends with its parent")
	require.NoError(t, l.Unlock(held), "Unlock of a hold whose parent ended")
	c.free(0, "released")

	for _, d := range []struct{ wait, lease time.Duration }{{-time.Second, 0}, {-2, 0}, {0, -time.Second}} {
		_, err := l.TryLock(ctx, d.wait, d.lease)
		assert.ErrorIs(t, err, distsync.ErrInvalidArgument, "TryLock(wait %v, lease %v)", d.wait, d.lease)
	}
	for _, lease := range tooShort {
		_, err := l.TryLock(ctx, 0, lease)
		assert.ErrorIs(t, err, distsync.ErrInvalidArgument, "TryLock(lease %v) under MinLease", lease)
	}
	// MinLease is a lease, though a Redlock round may outlast it and be
	// refused (ErrNotAcquired).
	held, err = l.TryLock(ctx, time.Second, distsync.MinLease)
	if assert.False(t, errors.Is(err, distsync.ErrInvalidArgument), "TryLock(lease MinLease): %v", err) && err == nil {
		if err := l.Unlock(held); err != nil { // MinLease may have passed
			assert.ErrorIs(t, err, distsync.ErrNotHeld)
		}
	}

	if _, ok := c.k.except["names"]; !ok {
		for _, name := range []string{"", "a{b", "a}b", strings.Repeat("x", 2000), "\xff", "a\nb"} {
			_, err := c.k.members(c.cs, name)
			assert.ErrorIs(t, err, distsync.ErrInvalidName, "%q", name)
		}
	}
}
