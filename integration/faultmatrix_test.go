package integration_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
	"github.com/distsync/distsync/multilock"
)

// The fault matrix: the cells of primitive × path × fault that the tests of
// holds_test.go leave open, each driven through its fault and its outcome
// checked. Every test that faults a script runs the same operation once
// without a fault on the same server first, so that the server has the
// script and the faulted command is really applied (or really not).

// waitCase is a primitive a waiter can wait on, for the waiter's side of a
// fault: block makes it refuse waiters, waiter waits for it.
type waitCase struct {
	name string
	set  string // the waiter set's suffix: distsync:{name}:<set>
	// block makes the primitive called name on c refuse a waiter (a
	// holder with a 2 s lease, where the primitive has leases) and returns
	// what lets the waiter in.
	block func(t *testing.T, c *distsync.Client, name string) (unblock func() error)
	// refill restores what a restart without persistence took that the
	// waiter needs besides a free lock (the semaphores' permits), or nil.
	refill func(c *distsync.Client, name string) error
	// waiter returns a wait for the primitive on c, at most budget long,
	// which gives back what it got.
	waiter func(t *testing.T, c *distsync.Client, name string) (wait func(budget time.Duration) error)
}

// lockWaitCase is the waitCase of a lock-like kind of lockKinds: blocked by
// a holder of blocker (the same kind, or for a side of the read-write lock
// the other side).
func lockWaitCase(k lockKind, set string, blocker lockKind) waitCase {
	return waitCase{
		name: k.name,
		set:  set,
		block: func(t *testing.T, c *distsync.Client, name string) func() error {
			l := blocker.make(t, c, name)
			held, err := l.TryLock(context.Background(), 0, 2*time.Second)
			require.NoError(t, err)
			return func() error { return l.Unlock(held) }
		},
		waiter: func(t *testing.T, c *distsync.Client, name string) func(time.Duration) error {
			l := k.make(t, c, name)
			return func(budget time.Duration) error {
				held, err := l.TryLock(context.Background(), budget, 0)
				if err != nil {
					return err
				}
				return l.Unlock(held)
			}
		},
	}
}

// kindNamed returns the kind of lockKinds called name.
func kindNamed(name string) lockKind {
	for _, k := range lockKinds {
		if k.name == name {
			return k
		}
	}
	panic("no lock kind " + name)
}

// waitCases are the primitives whose waiters share acquire.Do with the
// mutex's (TestWaiterSurvivesRestartAndCut covers the mutex).
var waitCases = []waitCase{
	lockWaitCase(kindNamed("fairlock"), "deadlines", kindNamed("fairlock")),
	lockWaitCase(kindNamed("rwlock-write"), "wwaiters", kindNamed("rwlock-read")),
	lockWaitCase(kindNamed("rwlock-read"), "rwaiters", kindNamed("rwlock-write")),
	{
		name: "semaphore",
		set:  "waiters",
		block: func(t *testing.T, c *distsync.Client, name string) func() error {
			sem := countingSem(t, c, name, 1)
			require.NoError(t, sem.TryAcquire(context.Background(), 1, 0))
			return func() error { return sem.Release(context.Background(), 1) }
		},
		refill: func(c *distsync.Client, name string) error {
			sem, err := c.Semaphore(name)
			if err == nil {
				_, err = sem.TrySetPermits(context.Background(), 1)
			}
			return err
		},
		waiter: func(t *testing.T, c *distsync.Client, name string) func(time.Duration) error {
			sem, err := c.Semaphore(name)
			require.NoError(t, err)
			return func(budget time.Duration) error {
				if err := sem.TryAcquire(context.Background(), 1, budget); err != nil {
					return err
				}
				return sem.Release(context.Background(), 1)
			}
		},
	},
	{
		name: "permit",
		set:  "waiters",
		block: func(t *testing.T, c *distsync.Client, name string) func() error {
			ps := permitSem(t, c, name, 1)
			p, err := ps.TryAcquire(context.Background(), 0, 2*time.Second)
			require.NoError(t, err)
			return func() error { return ps.Release(context.Background(), p) }
		},
		refill: func(c *distsync.Client, name string) error {
			ps, err := c.PermitSemaphore(name)
			if err == nil {
				_, err = ps.TrySetPermits(context.Background(), 1)
			}
			return err
		},
		waiter: func(t *testing.T, c *distsync.Client, name string) func(time.Duration) error {
			ps, err := c.PermitSemaphore(name)
			require.NoError(t, err)
			return func(budget time.Duration) error {
				p, err := ps.TryAcquire(context.Background(), budget, 0)
				if err != nil {
					return err
				}
				return ps.Release(context.Background(), p)
			}
		},
	},
	{
		name: "latch",
		set:  "waiters",
		block: func(t *testing.T, c *distsync.Client, name string) func() error {
			l, err := c.Latch(name)
			require.NoError(t, err)
			set, err := l.TrySetCount(context.Background(), 1)
			require.NoError(t, err)
			require.True(t, set)
			return func() error {
				_, err := l.CountDown(context.Background())
				return err
			}
		},
		waiter: func(t *testing.T, c *distsync.Client, name string) func(time.Duration) error {
			l, err := c.Latch(name)
			require.NoError(t, err)
			return func(budget time.Duration) error {
				ctx, cancel := context.WithTimeout(context.Background(), budget)
				defer cancel()
				return l.Await(ctx)
			}
		},
	},
}

// waitersKey is the key of the waiter set of case wc for the primitive
// called name (the default key prefix).
func waitersKey(wc waitCase, name string) string {
	return fmt.Sprintf("distsync:{%s}:%s", name, wc.set)
}

// C2 (finding 7 beyond the mutex): a waiter of every primitive rides out a
// server restart, and a cut with severed connections, within its budget,
// and then gets what it waited for. Every primitive waits on one server,
// through one fault.
func TestWaitersSurviveRestartAndCut(t *testing.T) {
	t.Parallel()
	// A budget far shorter than the sleep of a waiter that missed the
	// fault's wake-up (half the 30 s waiter window).
	const budget = 10 * time.Second
	// start blocks every primitive on holder, starts a waiter of each on
	// w, waits until each is registered and returns the outcomes and what
	// unblocks each.
	start := func(t *testing.T, s *redistest.Server, holder, w *distsync.Client) (map[string]<-chan error, map[string]func() error) {
		got := map[string]<-chan error{}
		unblock := map[string]func() error{}
		for _, wc := range waitCases {
			name := dstest.Name(t) + "-" + wc.name
			unblock[wc.name] = wc.block(t, holder, name)
			wait := wc.waiter(t, w, name)
			ch := make(chan error, 1)
			go func() { ch <- wait(budget) }()
			got[wc.name] = ch
			dstest.WaitWaiters(t, holder, waitersKey(wc, name), 1)
		}
		return got, unblock
	}
	t.Run("restart", func(t *testing.T) {
		t.Parallel()
		s := redistest.Start(t)
		redistest.RequireProcess(t, s)
		holder := dstest.ClientOn(t, s)
		got, _ := start(t, s, holder, dstest.ClientOn(t, s))
		s.Restart(t) // no persistence: every hold is gone, and every connection
		for _, wc := range waitCases {
			if wc.refill != nil { // as an operator would, retried while the connection comes back
				require.NoError(t, retry(func() error { return wc.refill(holder, dstest.Name(t)+"-"+wc.name) }))
			}
		}
		for _, wc := range waitCases {
			assert.NoError(t, receive(t, got[wc.name], wc.name), "%s: the waiter rides out the restart", wc.name)
		}
	})
	t.Run("cut", func(t *testing.T) {
		t.Parallel()
		s := redistest.Start(t)
		p := startCutProxy(t, s.Addr())
		got, unblock := start(t, s, dstest.ClientOn(t, s), connect(t, distsync.Options{Addrs: []string{p.Addr()}, RESP2: s.RESP2()}))
		p.cut()
		p.sever()
		time.Sleep(200 * time.Millisecond) // the length of the cut
		for _, wc := range waitCases {
			require.NoError(t, unblock[wc.name](), wc.name)
		}
		p.heal()
		for _, wc := range waitCases {
			assert.NoError(t, receive(t, got[wc.name], wc.name), "%s: the waiter rides out the cut", wc.name)
		}
	})
}

// renewCase is a hold the watchdog renews, for the renew path through
// faults, with a rival acquisition on another Client that the hold excludes.
type renewCase struct {
	name  string
	renew string // the text of the renewal script (dstest.Script)
	// hold takes the hold called name on c with the watchdog lease; ttl
	// reads its server lease, release releases it.
	hold func(t *testing.T, c *distsync.Client, name string) (held context.Context, ttl func() (time.Duration, error), release func() error)
	// rival returns an acquisition of name on c, within wait, that the
	// hold excludes; it returns what releases it.
	rival func(t *testing.T, c *distsync.Client, name string) func(wait time.Duration) (release func() error, err error)
}

var renewCases = []renewCase{
	{
		name:  "rwlock-read",
		renew: renewScript["rwlock-read"],
		hold: func(t *testing.T, c *distsync.Client, name string) (context.Context, func() (time.Duration, error), func() error) {
			l := kindNamed("rwlock-read").make(t, c, name)
			held, err := l.TryLock(context.Background(), 0, 0)
			require.NoError(t, err)
			return held, func() (time.Duration, error) { return l.TTL(context.Background()) }, func() error { return l.Unlock(held) }
		},
		rival: func(t *testing.T, c *distsync.Client, name string) func(time.Duration) (func() error, error) {
			w := kindNamed("rwlock-write").make(t, c, name) // a writer: another reader would share
			return func(wait time.Duration) (func() error, error) {
				held, err := w.TryLock(context.Background(), wait, 0)
				return func() error { return w.Unlock(held) }, err
			}
		},
	},
	{
		name:  "permit",
		renew: "Extend a held permit's lease",
		hold: func(t *testing.T, c *distsync.Client, name string) (context.Context, func() (time.Duration, error), func() error) {
			ps := permitSem(t, c, name, 1)
			p, err := ps.TryAcquire(context.Background(), 0, 0)
			require.NoError(t, err)
			return p.Context(), func() (time.Duration, error) { return p.TTL(context.Background()) },
				func() error { return ps.Release(context.Background(), p) }
		},
		rival: func(t *testing.T, c *distsync.Client, name string) func(time.Duration) (func() error, error) {
			ps, err := c.PermitSemaphore(name)
			require.NoError(t, err)
			return func(wait time.Duration) (func() error, error) {
				p, err := ps.TryAcquire(context.Background(), wait, 0)
				return func() error { return ps.Release(context.Background(), p) }, err
			}
		},
	},
}

// awaitRenewal waits until the server lease ttl reads rises: a renewal got
// through.
func awaitRenewal(t *testing.T, ttl func() (time.Duration, error)) {
	t.Helper()
	var prev time.Duration
	require.Eventually(t, func() bool {
		d, err := ttl()
		if err != nil {
			return false
		}
		rose := prev > 0 && d > prev
		prev = d
		return rose
	}, 10*time.Second, time.Millisecond, "no renewal seen")
}

// C1: the renew path of read holds and of permits through faults, as
// TestRenewalFaults drives the exclusive kinds: a renewal whose reply is
// lost (the server applied it), whose request is lost or whose reply is
// late is retried and the hold lives on; renewals that never get through
// end the holder's context with ErrLeaseLost, and the rival is granted only
// after that.
func TestRenewalFaultsReadAndPermit(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	const lease = 1500 * time.Millisecond // as TestRenewalFaults
	for _, rc := range renewCases {
		t.Run(rc.name, func(t *testing.T) {
			t.Parallel()
			c, f := faultyClient(t, s, lease)
			rival := rc.rival(t, dstest.ClientOn(t, s), dstest.Name(t))
			held, ttl, release := rc.hold(t, c, dstest.Name(t))
			awaitRenewal(t, ttl) // one renewal without a fault: the server has the script
			match := dstest.Script(rc.renew)
			lost := f.Inject(&dstest.Rule{Match: match, Fault: dstest.LoseReply, Times: 1})
			dropped := f.Inject(&dstest.Rule{Match: match, Fault: dstest.LoseRequest, Times: 1})
			late := f.Inject(&dstest.Rule{Match: match, Fault: dstest.LateReply, Delay: lease / 10, Times: 1})
			select {
			case <-late.Hit():
			case <-held.Done():
				t.Fatalf("the hold ended under the faults: %v", context.Cause(held))
			}
			time.Sleep(2 * lease) // two leases after the faults: only renewals keep it
			require.NoError(t, held.Err(), "the hold outlives a lost reply, a lost request and a late reply")
			assert.Equal(t, []int{1, 1, 1}, []int{lost.Hits(), dropped.Hits(), late.Hits()}, "each fault hit one renewal")
			_, err := rival(0)
			require.ErrorIs(t, err, distsync.ErrNotAcquired, "the server still has the hold")

			type grant struct {
				release  func() error
				err      error
				holderOK bool // the holder's context was alive when the rival was granted
			}
			got := make(chan grant, 1)
			go func() {
				release, err := rival(10 * time.Second)
				got <- grant{release, err, held.Err() == nil}
			}()
			f.Inject(&dstest.Rule{Match: match, Fault: dstest.LoseRequest})
			awaitLoss(t, held)
			g := receive(t, got, "rival")
			require.NoError(t, g.err)
			assert.False(t, g.holderOK, "the rival was granted while the holder's context was alive")
			require.NoError(t, g.release())
			assert.ErrorIs(t, release(), distsync.ErrNotHeld)
		})
	}
}

// beforeSend is a rueidis client, for distsync.FromClient, that runs before
// with the words of each command Do sends, ahead of sending it: to know
// that a request is on its way, or to hold it back (a request that reaches
// the server late).
type beforeSend struct {
	rueidis.Client
	before func(cmd []string)
}

func (b *beforeSend) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	b.before(cmd.Commands())
	return b.Client.Do(ctx, cmd)
}

// beforeSendClient returns a Client on s, through addr when it is not ""
// (a proxy's), whose commands pass through before; both are closed at
// cleanup.
func beforeSendClient(t *testing.T, s *redistest.Server, addr string, before func(cmd []string)) *distsync.Client {
	t.Helper()
	o := s.ClientOption()
	if addr != "" {
		o.InitAddress = []string{addr}
	}
	rc, err := rueidis.NewClient(o)
	require.NoError(t, err)
	c, err := distsync.FromClient(&beforeSend{Client: rc, before: before}, distsync.Options{})
	require.NoError(t, err)
	t.Cleanup(func() {
		c.Close()
		rc.Close()
	})
	return c
}

// twoHolds is two acquisitions of one primitive by one Client (a re-entry,
// or two permits), for the release path: count reads how many of them the
// server still holds, and rival checks that another Client gets the
// primitive at once (and releases it): nothing is left held.
type twoHolds struct {
	unlockA, unlockB func() error
	count            func() (int64, error)
	rival            func() error
}

// releaseCase is a primitive whose acquisitions are released by id.
type releaseCase struct {
	name    string
	release string // the text of the release script
	take    func(t *testing.T, c, other *distsync.Client, name string) twoHolds
}

// releaseCases are the lock kinds and permits.
var releaseCases = func() []releaseCase {
	var out []releaseCase
	for _, k := range lockKinds {
		rival := k
		if k.name == "rwlock-read" {
			rival = kindNamed("rwlock-write") // a reader would share
		}
		out = append(out, releaseCase{k.name, k.release, func(t *testing.T, c, other *distsync.Client, name string) twoHolds {
			l := k.make(t, c, name)
			ctx := context.Background()
			a, err := l.TryLock(ctx, 0, 0)
			require.NoError(t, err)
			// A re-entry with a lease, which the server records (a mutex's
			// watchdog re-entry is made by its Client with no round trip).
			b, err := l.TryLock(a, 0, time.Minute)
			require.NoError(t, err)
			r := rival.make(t, other, name)
			return twoHolds{
				unlockA: func() error { return l.Unlock(a) },
				unlockB: func() error { return l.Unlock(b) },
				count: func() (int64, error) {
					n, err := l.HoldCount(a)
					return int64(n), err
				},
				rival: func() error { return freeNow(r) },
			}
		}})
	}
	return append(out, releaseCase{"permit", "Return a permit to the pool", func(t *testing.T, c, other *distsync.Client, name string) twoHolds {
		ps := permitSem(t, c, name, 2)
		ctx := context.Background()
		a, err := ps.TryAcquire(ctx, 0, 0)
		require.NoError(t, err)
		b, err := ps.TryAcquire(ctx, 0, 0)
		require.NoError(t, err)
		r, err := other.PermitSemaphore(name)
		require.NoError(t, err)
		return twoHolds{
			unlockA: func() error { return ps.Release(ctx, a) },
			unlockB: func() error { return ps.Release(ctx, b) },
			count:   func() (int64, error) { return ps.Held(ctx) },
			rival: func() error {
				// Both permits: one left held would refuse the second.
				got, err := r.TryAcquireN(ctx, 2, 0, 0)
				if err != nil {
					return err
				}
				return errors.Join(r.Release(ctx, got[0]), r.Release(ctx, got[1]))
			},
		}
	}})
}()

// freeNow takes l at once and releases it.
func freeNow(l lockish) error {
	held, err := l.TryLock(context.Background(), 0, 0)
	if err != nil {
		return err
	}
	return l.Unlock(held)
}

// C3/C4: a release under a dropped connection and under a reply that comes
// after the release's own deadline (core.ReleaseTimeout, 5 s) is exact:
// Unlock returns nil if and only if the release was applied (a retry after
// an unknown outcome learns it), it never releases another acquisition's
// count, a further Unlock says ErrNotHeld, and nothing is left held.
func TestReleaseUnderDropAndLateReply(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	// Late: the kinds at once, as each release waits out its 5 s deadline.
	t.Run("late", func(t *testing.T) {
		t.Parallel()
		c, f := faultyClient(t, s, 0)
		other := dstest.ClientOn(t, s)
		holds := make([]twoHolds, len(releaseCases))
		for i, rc := range releaseCases {
			warm := rc.take(t, c, other, dstest.Name(t)+"-warm-"+rc.name) // the server gets the release script
			require.NoError(t, errors.Join(warm.unlockB(), warm.unlockA()))
			holds[i] = rc.take(t, c, other, dstest.Name(t)+"-"+rc.name)
			f.Inject(&dstest.Rule{Match: dstest.Script(rc.release), Fault: dstest.LateReply, Delay: time.Hour, Times: 1})
		}
		errs := make([]error, len(holds))
		var wg sync.WaitGroup
		for i, h := range holds {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = h.unlockB()
			}()
		}
		wg.Wait()
		for i, rc := range releaseCases {
			t.Run(rc.name, func(t *testing.T) {
				require.ErrorIs(t, errs[i], context.DeadlineExceeded, "no answer within the release's deadline")
				require.NoError(t, holds[i].unlockB(), "the retry learns that the late release was applied")
				exactRelease(t, holds[i])
			})
		}
	})
	for _, rc := range releaseCases {
		t.Run(rc.name+"/drop", func(t *testing.T) {
			t.Parallel()
			ds := redistest.Start(t)
			p := startCutProxy(t, ds.Addr())
			var armed atomic.Bool
			sent := make(chan struct{})
			c := beforeSendClient(t, ds, p.Addr(), func(cmd []string) {
				if dstest.Script(rc.release)(cmd) && armed.CompareAndSwap(true, false) {
					close(sent)
				}
			})
			warm := rc.take(t, c, dstest.ClientOn(t, ds), dstest.Name(t)+"-warm")
			require.NoError(t, errors.Join(warm.unlockB(), warm.unlockA()))
			h := rc.take(t, c, dstest.ClientOn(t, ds), dstest.Name(t))
			armed.Store(true)
			p.cut()
			got := make(chan error, 1)
			go func() { got <- h.unlockB() }()
			receive(t, sent, "the release request") // bounded: a release that sends no script must fail, not hang
			p.sever()                               // the request is dropped with its connection
			time.Sleep(200 * time.Millisecond)      // the length of the cut
			p.heal()
			require.NoError(t, receive(t, got, "unlock"), "the release is retried on a new connection")
			exactRelease(t, h)
		})
	}
}

// exactRelease checks, after h's second acquisition was released: one is
// left, the second says ErrNotHeld, and once the first is released too
// nothing is held.
func exactRelease(t *testing.T, h twoHolds) {
	t.Helper()
	var n int64
	require.NoError(t, retry(func() (err error) { // a connection the fault cut fails once
		n, err = h.count()
		return err
	}))
	assert.Equal(t, int64(1), n, "released once, and no other acquisition's count")
	assert.ErrorIs(t, h.unlockB(), distsync.ErrNotHeld)
	require.NoError(t, h.unlockA())
	require.NoError(t, h.rival(), "nothing is left held")
}

// leaveOf matches the command by which a waiter of each primitive gives up.
var leaveOf = map[string]func(cmd []string) bool{
	"mutex": func(cmd []string) bool { // the release script, with its leave flag (ARGV[5] 'l', its last)
		return dstest.Script(kindNamed("mutex").release)(cmd) && len(cmd) > 4 && cmd[len(cmd)-1] == "l"
	},
	"fairlock":     dstest.Script("A waiter gives up (its context ended or its wait budget was spent): remove"),
	"rwlock-write": dstest.Script("A waiter gives up (its context ended or its wait budget was spent): forget"),
	"rwlock-read":  dstest.Script("A waiter gives up (its context ended or its wait budget was spent): forget"),
	"semaphore":    dstest.Script("A waiter gives up: forget it"),
	"permit":       dstest.Script("A waiter gives up: forget it"),
	"latch":        func(cmd []string) bool { return len(cmd) > 0 && strings.EqualFold(cmd[0], "ZREM") },
}

// gaveUp asserts that a wait ended by its budget (or, for Await, its
// context's deadline).
func gaveUp(t *testing.T, err error) {
	t.Helper()
	require.Error(t, err)
	if !errors.Is(err, distsync.ErrNotAcquired) {
		require.ErrorIs(t, err, context.DeadlineExceeded)
	}
}

// noWaiters asserts that no waiter entry of the primitive called name is
// left on c's server. (A semaphore's record of the permit counts waiters
// need, ":needs", is kept until its window ends by design: it is not one
// waiter's.)
func noWaiters(t *testing.T, c *distsync.Client, name string) {
	t.Helper()
	rc := c.Rueidis()
	var keys []string
	for _, set := range []string{"waiters", "rwaiters", "wwaiters", "queue", "deadlines"} {
		keys = append(keys, fmt.Sprintf("distsync:{%s}:%s", name, set))
	}
	n, err := rc.Do(context.Background(), rc.B().Exists().Key(keys...).Build()).AsInt64()
	require.NoError(t, err)
	assert.Zero(t, n, "waiter entries left behind")
}

// C3/C4: a waiter of every primitive that gives up while its leave is
// faulted (request lost, reply lost after the server applied it, reply
// late) leaves no waiter entry when the wait returns, and nothing held:
// once the holder lets go, another Client gets the primitive.
func TestLeaveUnderFaults(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	cases := append([]waitCase{lockWaitCase(kindNamed("mutex"), "waiters", kindNamed("mutex"))}, waitCases...)
	for _, wc := range cases {
		t.Run(wc.name, func(t *testing.T) {
			t.Parallel()
			c, f := faultyClient(t, s, 0)
			holder := dstest.ClientOn(t, s)
			unblock := wc.block(t, holder, dstest.Name(t)+"-warm")
			gaveUp(t, wc.waiter(t, c, dstest.Name(t)+"-warm")(300*time.Millisecond)) // the server gets the leave script
			require.NoError(t, unblock())
			for _, fault := range []dstest.Fault{dstest.LoseRequest, dstest.LoseReply, dstest.LateReply} {
				name := fmt.Sprintf("%s-%d", dstest.Name(t), fault)
				unblock := wc.block(t, holder, name)
				wait := wc.waiter(t, c, name)
				rule := f.Inject(&dstest.Rule{Match: leaveOf[wc.name], Fault: fault, Delay: 300 * time.Millisecond, Times: 1})
				gaveUp(t, wait(300*time.Millisecond))
				require.Equal(t, 1, rule.Hits(), "fault %d hit the leave", fault)
				noWaiters(t, holder, name)
				require.NoError(t, unblock())
				require.NoError(t, wc.waiter(t, holder, name)(time.Second), "fault %d: nothing is left held", fault)
			}
		})
	}
}

// ackedClient starts a master with one replica in sync and returns a
// Client on the master that waits for the replica's acknowledgement (at
// most 200 ms) of every acquisition, and the replica.
func ackedClient(t *testing.T) (*distsync.Client, *redistest.Server) {
	t.Helper()
	master := redistest.Start(t)
	redistest.RequireReal(t, master, "a replica: the embedded server has no replication")
	replica := startReplica(t, master)
	return dstest.ClientOn(t, master, withReplicaAck), replica
}

// withReplicaAck makes a Client wait for one replica's acknowledgement of
// every acquisition, for 200 ms.
func withReplicaAck(o *distsync.Options) {
	o.ReplicaAck = distsync.ReplicaAck{Replicas: 1, Timeout: 200 * time.Millisecond}
}

// C5, finding 4: with the only replica paused, an acquisition of the fair
// lock and of either side of the read-write lock returns ErrNotReplicated
// and leaves nothing held (TestReplicaAckRefusesUnreplicatedGrant covers
// the mutex, TestReplicaAckSemaphores the semaphores).
func TestReplicaAckLocks(t *testing.T) {
	t.Parallel()
	c, replica := ackedClient(t)
	ctx := context.Background()
	kinds := []lockKind{kindNamed("fairlock"), kindNamed("rwlock-write"), kindNamed("rwlock-read")}
	ls := make([]lockish, len(kinds))
	for i, k := range kinds {
		ls[i] = k.make(t, c, "acked-"+k.name)
		held, err := ls[i].TryLock(ctx, 0, 0)
		require.NoError(t, err, "%s: granted while the replica answers", k.name)
		require.NoError(t, ls[i].Unlock(held))
	}
	errs := make([]error, len(kinds))
	replica.Pause()
	for i, l := range ls {
		_, errs[i] = l.TryLock(ctx, 0, 0)
	}
	replica.Resume()
	for i, k := range kinds {
		require.ErrorIs(t, errs[i], distsync.ErrNotReplicated, k.name)
		require.Eventually(t, func() bool {
			locked, err := ls[i].IsLocked(ctx)
			return err == nil && !locked
		}, 10*time.Second, 5*time.Millisecond, "%s: the unacknowledged grant was undone", k.name)
		held, err := ls[i].TryLock(ctx, 0, 0)
		require.NoError(t, err, "%s: granted again once the replica answers", k.name)
		require.NoError(t, ls[i].Unlock(held))
	}
}

// C5, finding 12 for permits: a context cancelled while the granting
// attempt is on the wire gets context.Canceled and leaves no permit held; a
// context that ends while the permit is held returns it.
func TestContextEndsPermit(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	c, f := faultyClient(t, s, 0)
	ps := permitSem(t, c, dstest.Name(t), 1)
	rival := permitSem(t, dstest.ClientOn(t, s), dstest.Name(t), 1)
	free := func(why string) { // the rival gets the one permit well within the 30 s lease
		t.Helper()
		p, err := rival.TryAcquire(context.Background(), 5*time.Second, 0)
		require.NoError(t, err, why)
		require.NoError(t, rival.Release(context.Background(), p))
	}
	free("the server gets the acquire script")

	ctx, cancel := context.WithCancel(context.Background())
	rule := f.Inject(&dstest.Rule{Match: dstest.Script("Take n permits of the permit semaphore"), Fault: dstest.Hook, Times: 1, Then: cancel})
	_, err := ps.TryAcquire(ctx, 0, 0)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 1, rule.Hits())
	free("the permit granted after ctx ended was returned")

	ctx, cancel = context.WithCancel(context.Background())
	p, err := ps.TryAcquire(ctx, 0, 0)
	require.NoError(t, err)
	cancel()
	<-p.Context().Done()
	free("the permit whose context ended was returned")
	assert.NoError(t, ps.Release(context.Background(), p), "Release reports the return distsync made")
	assert.ErrorIs(t, ps.Release(context.Background(), p), distsync.ErrNotHeld)
}

// extendCase is an acquisition with an explicit lease, of each kind that
// has one: take makes it on c and returns its context, what extends it,
// and a rival on other that it excludes, which waits at most wait.
type extendCase struct {
	name string
	take func(t *testing.T, c, other *distsync.Client, name string) (held context.Context, extend func(time.Duration) error, rival func(wait time.Duration) error)
}

// extendCases are the extendCase of every lock-like kind and of the permit
// semaphore, with lease.
func extendCases(lease time.Duration) []extendCase {
	var cases []extendCase
	for _, k := range lockKinds {
		cases = append(cases, extendCase{k.name, func(t *testing.T, c, other *distsync.Client, name string) (context.Context, func(time.Duration) error, func(time.Duration) error) {
			l := k.make(t, c, name)
			held, err := l.TryLock(context.Background(), 0, lease)
			require.NoError(t, err)
			r := k.rival(t, other, name)
			return held, func(d time.Duration) error { return l.Extend(held, d) }, func(wait time.Duration) error {
				ctx, err := r.TryLock(context.Background(), wait, 0)
				if err != nil {
					return err
				}
				return r.Unlock(ctx)
			}
		}})
	}
	cases = append(cases, extendCase{"permit", func(t *testing.T, c, other *distsync.Client, name string) (context.Context, func(time.Duration) error, func(time.Duration) error) {
		ps := permitSem(t, c, name, 1)
		p, err := ps.TryAcquire(context.Background(), 0, lease)
		require.NoError(t, err)
		r, err := other.PermitSemaphore(name)
		require.NoError(t, err)
		return p.Context(), func(d time.Duration) error { return p.Extend(context.Background(), d) }, func(wait time.Duration) error {
			q, err := r.TryAcquire(context.Background(), wait, 0)
			if err != nil {
				return err
			}
			return r.Release(context.Background(), q)
		}
	}})
	return cases
}

// isExtend matches the extension scripts of every kind.
func isExtend(cmd []string) bool {
	return dstest.Script("Extend a held permit's lease")(cmd) || dstest.Script("Move the end of the explicit lease")(cmd)
}

// C5 and finding 9: an extension on the wire does not keep the context
// alive past its lease. Its request is held back until the context ends
// (lease - drift after the grant), then reaches the server either before the
// lease ends there ("confirmed late": the server extends it, but the
// confirmation comes after the lease ended by the holder's clock) or after
// ("refused"). Either way the context ended at the lease's end
// (ErrLeaseExpired), while the request was on its way, Extend says
// ErrNotHeld, and nothing is held: what the server extended is given back,
// so a rival holds long before the extension would have ended.
func TestExtendOnTheWireEndsAtLease(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	const lease = 300 * time.Millisecond
	for _, ec := range extendCases(lease) {
		for name, after := range map[string]time.Duration{"confirmed late": 0, "refused": lease} {
			t.Run(ec.name+"/"+name, func(t *testing.T) {
				t.Parallel()
				var (
					late      atomic.Bool
					held      context.Context
					onTheWire = make(chan bool, 1) // whether held ended while the request was on its way
				)
				c := beforeSendClient(t, s, "", func(cmd []string) {
					if !late.Load() || !isExtend(cmd) {
						return
					}
					// Bounded, so that a context that does not end fails
					// the test rather than hang it.
					select {
					case <-held.Done():
						onTheWire <- true
						time.Sleep(after)
					case <-time.After(10 * lease):
						onTheWire <- false
					}
				})
				held, extend, rival := ec.take(t, c, dstest.ClientOn(t, s), dstest.Name(t))
				require.NoError(t, extend(lease), "the server gets the extend script")
				late.Store(true)
				err := extend(time.Minute)
				require.True(t, <-onTheWire, "the context lived while the extension was on the wire")
				require.ErrorIs(t, err, distsync.ErrNotHeld)
				assert.ErrorIs(t, context.Cause(held), distsync.ErrLeaseExpired)
				require.NoError(t, rival(10*time.Second), "nothing is held")
			})
		}
	}
}

// C3: a multilock whose last member's grant reply is lost holds nothing
// after the error (the members taken before it are released, the lost
// grant is given back); with a wait, the repeated attempt returns the grant
// and each member is held once.
func TestMultilockMemberReplyLost(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	c, f := faultyClient(t, s, 0)
	other := dstest.ClientOn(t, s)
	kinds := lockKinds[:3] // the exclusive kinds, acquired in this order (their keys sort so)
	var members []distsync.Locker
	var ls, rivals []lockish
	for i, k := range kinds {
		name := fmt.Sprintf("%s-%d", dstest.Name(t), i)
		l := k.make(t, c, name)
		ls, members, rivals = append(ls, l), append(members, l), append(rivals, k.make(t, other, name))
	}
	ml, err := multilock.New(members)
	require.NoError(t, err)
	ctx := context.Background()
	held, err := ml.TryLock(ctx, 0, 0) // the server gets the scripts
	require.NoError(t, err)
	require.NoError(t, ml.Unlock(held))

	last := kinds[len(kinds)-1]
	lastKey := rivals[len(rivals)-1].Key()
	onLast := func(cmd []string) bool { return dstest.Script(last.acquire)(cmd) && slices.Contains(cmd, lastKey) }
	rule := f.Inject(&dstest.Rule{Match: onLast, Fault: dstest.LoseReply, Times: 1})
	_, err = ml.TryLock(ctx, 0, 0)
	require.ErrorIs(t, err, dstest.ErrInjected)
	require.Equal(t, 1, rule.Hits())
	for i, r := range rivals[:len(rivals)-1] {
		require.NoError(t, freeNow(r), "member %s was released", kinds[i].name)
	}
	freeWithin(t, rivals[len(rivals)-1], 5*time.Second, "the lost grant was given back")

	rule = f.Inject(&dstest.Rule{Match: onLast, Fault: dstest.LoseReply, Times: 1})
	held, err = ml.TryLock(ctx, 5*time.Second, 0)
	require.NoError(t, err, "the repeated attempt returns the grant")
	require.Equal(t, 1, rule.Hits())
	for i, l := range ls {
		n, err := l.HoldCount(ml.Members(held)[i])
		require.NoError(t, err)
		assert.Equal(t, 1, n, "%s granted once", kinds[i].name)
	}
	require.NoError(t, ml.Unlock(held))
	for i, r := range rivals {
		require.NoError(t, freeNow(r), "member %s is free", kinds[i].name)
	}
}

// C3: the calls that are not idempotent by design (docs/safety.md) are
// sent once: a latch's CountDown and a counting semaphore's Release whose
// reply is lost report the failure and were applied exactly once (no
// hidden retry counts twice); when the request is lost they report the
// failure and change nothing. The caller cannot tell the two apart, as the
// docs say.
func TestUnownedCallsAtMostOnce(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	type onceCase struct {
		name   string
		script string
		// call makes the call; read returns the count it changes, by one a call
		call func() error
		read func() (int64, error)
	}
	c, f := faultyClient(t, s, 0)
	ctx := context.Background()
	l, err := c.Latch(dstest.Name(t))
	require.NoError(t, err)
	set, err := l.TrySetCount(ctx, 10)
	require.NoError(t, err)
	require.True(t, set)
	sem := countingSem(t, c, dstest.Name(t)+"-sem", 0)
	cases := []onceCase{
		{"latch CountDown", "Count the latch down by one",
			func() error { _, err := l.CountDown(ctx); return err },
			func() (int64, error) { n, err := l.Count(ctx); return -n, err }},
		{"semaphore Release", "Add n permits",
			func() error { return sem.Release(ctx, 1) },
			func() (int64, error) { return sem.Available(ctx) }},
	}
	for _, oc := range cases {
		require.NoError(t, oc.call(), "%s: the server gets the script", oc.name)
		before, err := oc.read()
		require.NoError(t, err)
		f.Inject(&dstest.Rule{Match: dstest.Script(oc.script), Fault: dstest.LoseReply, Times: 1})
		require.ErrorIs(t, oc.call(), dstest.ErrInjected, oc.name)
		after, err := oc.read()
		require.NoError(t, err)
		assert.Equal(t, before+1, after, "%s: a lost reply: applied once", oc.name)
		f.Inject(&dstest.Rule{Match: dstest.Script(oc.script), Fault: dstest.LoseRequest, Times: 1})
		require.ErrorIs(t, oc.call(), dstest.ErrInjected, oc.name)
		again, err := oc.read()
		require.NoError(t, err)
		assert.Equal(t, after, again, "%s: a lost request: not applied", oc.name)
	}
}
