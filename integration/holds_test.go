package integration_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/core"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
	"github.com/distsync/distsync/multilock"
	"github.com/distsync/distsync/mutex"
	"github.com/distsync/distsync/redlock"
	"github.com/distsync/distsync/rwlock"
	"github.com/distsync/distsync/semaphore"
)

// The hold model at the edges of a hold's life: one test (at least) per
// finding of the review of the hold bookkeeping, over every lock-like
// primitive where the finding applies. Faults are injected with
// dstest.Faulty, a rueidis client passed to FromClient.

// lockish is what the tests need of a lock-like primitive: the Locker
// methods, the server's view of the hold (TTL, hold count of the owner ctx
// carries, whether anyone holds it) and the scripts to inject faults into.
type lockish interface {
	distsync.Locker
	TTL(ctx context.Context) (time.Duration, error)
	HoldCount(ctx context.Context) (int, error)
	IsLocked(ctx context.Context) (bool, error)
	Extend(ctx context.Context, lease time.Duration) error
}

// lockKind makes one kind of lock-like primitive; acquire and release match
// its acquisition and release scripts on the wire.
type lockKind struct {
	name             string
	make             func(t *testing.T, c *distsync.Client, name string) lockish
	acquire, release string // text of the scripts' bodies (dstest.Script)
}

// renewScript is the text of each kind's renewal script.
var renewScript = map[string]string{
	"mutex":        "Extend the owner's lease to at least the watchdog lease",
	"fairlock":     "Extend the owner's lease to at least the watchdog lease",
	"rwlock-write": "Extend one hold's lease to at least the watchdog lease",
	"rwlock-read":  "Extend one hold's lease to at least the watchdog lease",
}

var lockKinds = []lockKind{
	{"mutex", func(t *testing.T, c *distsync.Client, name string) lockish {
		m, err := c.Mutex(name)
		require.NoError(t, err)
		return m
	}, "Acquire or re-enter the reentrant lock", "Release one acquisition, by its id; when it was the owner's last, hand\n-- the lock on"},
	{"fairlock", func(t *testing.T, c *distsync.Client, name string) lockish {
		f, err := c.FairLock(name)
		require.NoError(t, err)
		return f
	}, "Acquire or re-enter the fair lock", "hand\n-- the lock to the head of the queue (fl_handon"},
	{"rwlock-write", func(t *testing.T, c *distsync.Client, name string) lockish {
		rw, err := c.RWLock(name)
		require.NoError(t, err)
		return rw.Write()
	}, "Acquire or re-enter the write hold", "Release one write acquisition"},
	{"rwlock-read", func(t *testing.T, c *distsync.Client, name string) lockish {
		rw, err := c.RWLock(name)
		require.NoError(t, err)
		return rw.Read()
	}, "Acquire or re-enter a read hold", "Release one read acquisition"},
}

// rival makes, on c, the lock of the given name that a hold of kind k keeps
// out: the same kind, but a writer for the read kind, since readers share.
func (k lockKind) rival(t *testing.T, c *distsync.Client, name string) lockish {
	if k.name == "rwlock-read" {
		for _, w := range lockKinds {
			if w.name == "rwlock-write" {
				return w.make(t, c, name)
			}
		}
	}
	return k.make(t, c, name)
}

// faultyClient returns a Client on s whose commands pass through a Faulty
// layer, with the watchdog lease; both are closed at cleanup.
func faultyClient(t *testing.T, s *redistest.Server, lease time.Duration) (*distsync.Client, *dstest.Faulty) {
	t.Helper()
	return dstest.FaultyClient(t, s, lease)
}

// eachKind runs body as a parallel subtest for each of kinds, with the lock
// of the subtest's name on a Client whose commands pass through a Faulty
// layer (c, f, l) and, on another Client, the lock of that name that a hold
// of l keeps out (other, see lockKind.rival).
func eachKind(t *testing.T, kinds []lockKind, body func(t *testing.T, k lockKind, c *distsync.Client, f *dstest.Faulty, l, other lockish)) {
	t.Helper()
	s := redistest.Shared(t)
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			c, f := faultyClient(t, s, 0)
			body(t, k, c, f, k.make(t, c, dstest.Name(t)), k.rival(t, dstest.ClientOn(t, s), dstest.Name(t)))
		})
	}
}

// heldNow returns a Rule.Then asserting that l is held on the server: that
// the command the fault hit was applied before the fault took its reply.
func heldNow(t *testing.T, l lockish, why string) func() {
	return func() {
		locked, err := l.IsLocked(context.Background())
		assert.NoError(t, err)
		assert.True(t, locked, why)
	}
}

// freeWithin asserts that another Client gets the lock within wait, much
// less than the lease an abandoned grant would keep it for, and releases it.
func freeWithin(t *testing.T, other lockish, wait time.Duration, why string) {
	t.Helper()
	ctx, err := other.TryLock(context.Background(), wait, 0)
	require.NoError(t, err, why)
	require.NoError(t, other.Unlock(ctx))
}

// Finding 1: a re-entry with a shorter explicit lease does not shorten the
// hold's lease below what the outer acquisition was promised.
func TestReentryNeverShortensLease(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	for _, k := range lockKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			c := dstest.ClientOn(t, s)
			l := k.make(t, c, dstest.Name(t))
			ctx := context.Background()
			for _, outerLease := range []time.Duration{0, time.Minute} { // watchdog (30 s), explicit
				outer, err := l.TryLock(ctx, 0, outerLease)
				require.NoError(t, err)
				inner, err := l.TryLock(outer, 0, 300*time.Millisecond)
				require.NoError(t, err)
				ttl, err := l.TTL(ctx)
				require.NoError(t, err)
				assert.Greater(t, ttl, 20*time.Second, "outer lease %v: the server lease after a 300 ms re-entry", outerLease)
				n, err := l.HoldCount(outer)
				require.NoError(t, err)
				assert.Equal(t, 2, n)
				require.NoError(t, l.Unlock(inner))
				ttl, err = l.TTL(ctx)
				require.NoError(t, err)
				assert.Greater(t, ttl, 20*time.Second, "outer lease %v: after the inner release", outerLease)
				require.NoError(t, outer.Err())
				require.NoError(t, l.Unlock(outer))
			}
		})
	}
}

// Finding 2: explicit and watchdog acquisitions of one hold keep their own
// lifetimes. The watchdog renews while a watchdog acquisition lives; when the
// last one goes the lease falls to the latest explicit end left; every
// context tells the truth about its own acquisition.
func TestMixedLeasesKeepTheirLifetimes(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	const explicit = time.Second
	for _, k := range lockKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			c := dstest.ClientOn(t, s, func(o *distsync.Options) { o.Watchdog.Lease = 3 * time.Second })
			other := k.rival(t, dstest.ClientOn(t, s), dstest.Name(t))
			l := k.make(t, c, dstest.Name(t))
			ctx := context.Background()

			// Explicit outer, watchdog inner: releasing the inner stops the
			// renewal; the hold ends with the outer's lease.
			outer, err := l.TryLock(ctx, 0, explicit)
			require.NoError(t, err)
			inner, err := l.TryLock(outer, 0, 0)
			require.NoError(t, err)
			require.NoError(t, l.Unlock(inner))
			ttl, err := l.TTL(ctx)
			require.NoError(t, err)
			assert.LessOrEqual(t, ttl, explicit, "the lease fell back to the explicit end")
			<-outer.Done()
			assert.ErrorIs(t, context.Cause(outer), distsync.ErrLeaseExpired)
			freeWithin(t, other, 5*time.Second, "the lock ends with its last explicit lease, unrenewed")

			// Watchdog outer, explicit inner taken on a context that carries
			// the owner but not the outer's lifetime: releasing the outer
			// leaves the inner held until its own end, and no longer.
			outer, err = l.TryLock(ctx, 0, 0)
			require.NoError(t, err)
			inner, err = l.TryLock(context.WithoutCancel(outer), 0, explicit)
			require.NoError(t, err)
			require.NoError(t, l.Unlock(outer))
			assert.ErrorIs(t, context.Cause(outer), distsync.ErrReleased)
			require.NoError(t, inner.Err(), "the inner acquisition still holds")
			n, err := l.HoldCount(inner)
			require.NoError(t, err)
			assert.Equal(t, 1, n, "the server keeps the inner acquisition")
			ttl, err = l.TTL(ctx)
			require.NoError(t, err)
			assert.LessOrEqual(t, ttl, explicit)
			<-inner.Done()
			assert.ErrorIs(t, context.Cause(inner), distsync.ErrLeaseExpired)
			freeWithin(t, other, 5*time.Second, "free after the inner's explicit lease")

			// A re-entry on the outer's own context ends with it: releasing
			// the outer releases the inner too.
			outer, err = l.TryLock(ctx, 0, 0)
			require.NoError(t, err)
			inner, err = l.TryLock(outer, 0, time.Minute)
			require.NoError(t, err)
			require.NoError(t, l.Unlock(outer))
			<-inner.Done()
			freeWithin(t, other, 5*time.Second, "the inner acquisition ended with the context it was taken on")
		})
	}
}

// Finding 3: an acquisition whose grant arrives during Close returns an
// error wrapping ErrClosed, and its grant is released.
func TestCloseRacingAnAcquisition(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	eachKind(t, lockKinds, func(t *testing.T, k lockKind, c *distsync.Client, f *dstest.Faulty, l, other lockish) {
		// Any hold of c ends at Close: this one tells the hook when. (Its
		// name is new each run: Close leaves it to expire.)
		canary := k.make(t, c, fmt.Sprintf("%s-canary-%d", dstest.Name(t), time.Now().UnixNano()))
		cctx, err := canary.TryLock(context.Background(), 0, 0)
		require.NoError(t, err)
		f.Inject(&dstest.Rule{Match: dstest.Script(k.acquire), Fault: dstest.Hook, Times: 1, Then: func() {
			heldNow(t, l, "the grant was applied before Close")()
			go c.Close()
			<-cctx.Done() // Close has abandoned the holds
		}})
		_, err = l.TryLock(context.Background(), 0, 0)
		require.ErrorIs(t, err, distsync.ErrClosed)
		c.Close() // waits for the give-back
		freeWithin(t, other, 0, "the grant that came back during Close was released")
	})
	t.Run("permit", func(t *testing.T) {
		t.Parallel()
		c, f := faultyClient(t, s, 0)
		ps := permitSem(t, c, dstest.Name(t), 1)
		canary, err := c.Mutex(fmt.Sprintf("%s-canary-%d", dstest.Name(t), time.Now().UnixNano()))
		require.NoError(t, err)
		cctx, err := canary.Lock(context.Background())
		require.NoError(t, err)
		f.Inject(&dstest.Rule{Match: dstest.Script("Take n permits of the permit semaphore"), Fault: dstest.Hook, Times: 1, Then: func() {
			permitsHeld(t, ps, 1, "the grant was applied before Close")()
			go c.Close()
			<-cctx.Done()
		}})
		_, err = ps.TryAcquire(context.Background(), 0, 0)
		require.ErrorIs(t, err, distsync.ErrClosed)
		c.Close()
		held, err := permitSem(t, dstest.ClientOn(t, s), dstest.Name(t), 1).Held(context.Background())
		require.NoError(t, err)
		assert.Zero(t, held, "the permit granted during Close was returned")
	})
}

// permitsHeld returns a Rule.Then asserting that n permits of ps are held
// on the server.
func permitsHeld(t *testing.T, ps *semaphore.PermitSemaphore, n int64, why string) func() {
	return func() {
		held, err := ps.Held(context.Background())
		assert.NoError(t, err)
		assert.Equal(t, n, held, why)
	}
}

// permitSem returns the permit semaphore name on c with n permits.
func permitSem(t *testing.T, c *distsync.Client, name string, n int64) *semaphore.PermitSemaphore {
	t.Helper()
	ps, err := c.PermitSemaphore(name)
	require.NoError(t, err)
	_, err = ps.TrySetPermits(context.Background(), n)
	require.NoError(t, err)
	return ps
}

// countingSem returns the counting semaphore name on c with n permits.
func countingSem(t *testing.T, c *distsync.Client, name string, n int64) *semaphore.Semaphore {
	t.Helper()
	s, err := c.Semaphore(name)
	require.NoError(t, err)
	_, err = s.TrySetPermits(context.Background(), n)
	require.NoError(t, err)
	return s
}

// Finding 5: a retried release returns what the first attempt would have,
// never releases another acquisition's count, and of concurrent releases of
// one acquisition exactly one reports the release.
func TestRetriedReleaseIsExact(t *testing.T) {
	t.Parallel()
	eachKind(t, lockKinds, func(t *testing.T, k lockKind, c *distsync.Client, f *dstest.Faulty, l, other lockish) {
		ctx := context.Background()
		a, err := l.TryLock(ctx, 0, 0)
		require.NoError(t, err)
		b, err := l.TryLock(a, 0, 0)
		require.NoError(t, err)
		cc, err := l.TryLock(b, 0, 0)
		require.NoError(t, err)

		// Unlock(c) is applied, but no reply ever arrives.
		f.Inject(&dstest.Rule{Match: dstest.Script(k.release), Fault: dstest.LoseReply, Times: 1})
		f.Inject(&dstest.Rule{Match: dstest.Script(k.release), Fault: dstest.LoseRequest})
		err = l.Unlock(cc)
		require.ErrorIs(t, err, dstest.ErrInjected)
		require.Error(t, cc.Err(), "a failed Unlock ends the context all the same")
		f.Clear()
		n, err := l.HoldCount(a)
		require.NoError(t, err)
		require.Equal(t, 2, n, "the release whose reply was lost was applied")
		require.NoError(t, l.Unlock(b))
		require.NoError(t, l.Unlock(cc), "the retry learns that the first attempt was applied")
		n, err = l.HoldCount(a)
		require.NoError(t, err)
		assert.Equal(t, 1, n, "the retry released no other acquisition's count")
		require.NoError(t, a.Err())
		assert.ErrorIs(t, l.Unlock(cc), distsync.ErrNotHeld, "reported once")

		// Concurrent releases of one acquisition: exactly one reports it.
		exactlyOneReleases(t, func() error { return l.Unlock(a) })
		locked, err := l.IsLocked(ctx)
		require.NoError(t, err)
		assert.False(t, locked)
	})
}

// Finding 5 for permits: a retried release of a permit returns what the
// first attempt did, and of concurrent releases exactly one reports it.
func TestRetriedPermitReleaseIsExact(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	c, f := faultyClient(t, s, 0)
	ps := permitSem(t, c, dstest.Name(t), 2)
	ctx := context.Background()
	keep, err := ps.Acquire(ctx)
	require.NoError(t, err)
	p, err := ps.Acquire(ctx)
	require.NoError(t, err)
	const release = "Return a permit to the pool"
	f.Inject(&dstest.Rule{Match: dstest.Script(release), Fault: dstest.LoseReply, Times: 1})
	f.Inject(&dstest.Rule{Match: dstest.Script(release), Fault: dstest.LoseRequest})
	require.ErrorIs(t, ps.Release(ctx, p), dstest.ErrInjected)
	require.Error(t, p.Context().Err(), "a failed Release ends the permit's context")
	f.Clear()
	avail, err := ps.Available(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(1), avail, "the release whose reply was lost was applied")
	require.NoError(t, ps.Release(ctx, p), "the retry learns that the first attempt was applied")
	assert.ErrorIs(t, ps.Release(ctx, p), distsync.ErrNotHeld)
	avail, err = ps.Available(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(1), avail, "returned once: the other permit is still held")
	require.NoError(t, keep.Context().Err())

	exactlyOneReleases(t, func() error { return ps.Release(ctx, keep) })
	held, err := ps.Held(ctx)
	require.NoError(t, err)
	assert.Zero(t, held)
}

// A Client closed while a release is on the wire: the release is applied
// and reported, and nothing is left held.
func TestCloseDuringRelease(t *testing.T) {
	t.Parallel()
	eachKind(t, lockKinds, func(t *testing.T, k lockKind, c *distsync.Client, f *dstest.Faulty, l, other lockish) {
		held, err := l.TryLock(context.Background(), 0, 0)
		require.NoError(t, err)
		closed := make(chan struct{})
		f.Inject(&dstest.Rule{Match: dstest.Script(k.release), Fault: dstest.Hook, Times: 1, Then: func() {
			go func() {
				c.Close()
				close(closed)
			}()
		}})
		require.NoError(t, l.Unlock(held))
		<-closed
		freeWithin(t, other, 0, "released")
	})
}

// exactlyOneReleases runs release from four goroutines at once: exactly one
// reports the release, the others ErrNotHeld.
func exactlyOneReleases(t *testing.T, release func() error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = release()
		}()
	}
	wg.Wait()
	nils := 0
	for _, err := range errs {
		if err == nil {
			nils++
		} else {
			assert.ErrorIs(t, err, distsync.ErrNotHeld)
		}
	}
	assert.Equal(t, 1, nils, "%v", errs)
}

// Finding 5, second half: a release whose request was lost is retried; when
// the acquisition had meanwhile expired and another owner took the lock,
// the retry says ErrNotHeld and leaves the other owner's hold alone.
func TestRetryAfterLostRequestOfExpiredHold(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	for _, k := range lockKinds[:3] { // exclusive kinds: another owner can take it
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			c, f := faultyClient(t, s, 0)
			l := k.make(t, c, dstest.Name(t))
			other := k.make(t, dstest.ClientOn(t, s), dstest.Name(t))
			ctx := context.Background()
			held, err := l.TryLock(ctx, 0, 500*time.Millisecond)
			require.NoError(t, err)
			f.Inject(&dstest.Rule{Match: dstest.Script(k.release), Fault: dstest.LoseRequest})
			require.ErrorIs(t, l.Unlock(held), dstest.ErrInjected)
			f.Clear()
			taken, err := other.TryLock(ctx, 10*time.Second, 0)
			require.NoError(t, err)
			assert.ErrorIs(t, l.Unlock(held), distsync.ErrNotHeld)
			require.NoError(t, taken.Err())
			require.NoError(t, other.Unlock(taken), "the other owner's hold was untouched")
		})
	}
}

// Finding 6: a grant the server applied but whose reply was lost does not
// leak the lock: a single try gives it back at once; a wait repeats the
// attempt, which returns the grant instead of granting twice.
func TestLostGrantReply(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	eachKind(t, lockKinds, func(t *testing.T, k lockKind, c *distsync.Client, f *dstest.Faulty, l, other lockish) {
		ctx := context.Background()

		f.Inject(&dstest.Rule{Match: dstest.Script(k.acquire), Fault: dstest.LoseReply, Times: 1, Then: heldNow(t, l, "the grant whose reply is lost was applied")})
		_, err := l.TryLock(ctx, 0, 0)
		require.ErrorIs(t, err, dstest.ErrInjected)
		freeWithin(t, other, 5*time.Second, "the grant whose reply was lost was given back")

		f.Inject(&dstest.Rule{Match: dstest.Script(k.acquire), Fault: dstest.LoseReply, Times: 1, Then: heldNow(t, l, "the grant whose reply is lost was applied")})
		held, err := l.TryLock(ctx, 5*time.Second, 0)
		require.NoError(t, err, "the repeated attempt returns the grant")
		n, err := l.HoldCount(held)
		require.NoError(t, err)
		assert.Equal(t, 1, n, "granted once")
		require.NoError(t, l.Unlock(held))
		locked, err := l.IsLocked(ctx)
		require.NoError(t, err)
		assert.False(t, locked)

		// A reply that comes after the attempt's deadline: the same.
		f.Inject(&dstest.Rule{Match: dstest.Script(k.acquire), Fault: dstest.LateReply, Delay: time.Hour, Times: 1, Then: heldNow(t, l, "the grant whose reply is late was applied")})
		tctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		_, err = l.TryLock(tctx, time.Minute, 0)
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded)
		freeWithin(t, other, 5*time.Second, "the late grant was given back")
	})
	t.Run("permit", func(t *testing.T) {
		t.Parallel()
		c, f := faultyClient(t, s, 0)
		ps := permitSem(t, c, dstest.Name(t), 1)
		ctx := context.Background()
		f.Inject(&dstest.Rule{Match: dstest.Script("Take n permits of the permit semaphore"), Fault: dstest.LoseReply, Times: 1, Then: permitsHeld(t, ps, 1, "the grant whose reply is lost was applied")})
		_, err := ps.TryAcquire(ctx, 0, 0)
		require.ErrorIs(t, err, dstest.ErrInjected)
		ps2 := permitSem(t, dstest.ClientOn(t, s), dstest.Name(t), 1)
		p, err := ps2.TryAcquire(ctx, 5*time.Second, 0)
		require.NoError(t, err, "the permit whose reply was lost came back")
		require.NoError(t, p.Context().Err())
		require.NoError(t, ps2.Release(ctx, p))

		f.Inject(&dstest.Rule{Match: dstest.Script("Take n permits of the permit semaphore"), Fault: dstest.LoseReply, Times: 1, Then: permitsHeld(t, ps, 1, "the grant whose reply is lost was applied")})
		p, err = ps.TryAcquire(ctx, 5*time.Second, 0)
		require.NoError(t, err)
		held, err := ps.Held(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(1), held, "granted once")
		require.NoError(t, ps.Release(ctx, p))
	})
	t.Run("semaphore", func(t *testing.T) {
		t.Parallel()
		c, f := faultyClient(t, s, 0)
		sem := countingSem(t, c, dstest.Name(t), 1)
		ctx := context.Background()
		taken := func() {
			avail, err := sem.Available(ctx)
			assert.NoError(t, err)
			assert.Zero(t, avail, "the take whose reply is lost was applied")
		}
		f.Inject(&dstest.Rule{Match: dstest.Script("Take n permits from the counting semaphore"), Fault: dstest.LoseReply, Times: 1, Then: taken})
		require.ErrorIs(t, sem.TryAcquire(ctx, 1, 0), dstest.ErrInjected)
		require.NoError(t, countingSem(t, dstest.ClientOn(t, s), dstest.Name(t), 1).TryAcquire(ctx, 1, 5*time.Second), "the permit came back")
		require.NoError(t, sem.Release(ctx, 1))

		f.Inject(&dstest.Rule{Match: dstest.Script("Take n permits from the counting semaphore"), Fault: dstest.LoseReply, Times: 1, Then: taken})
		require.NoError(t, sem.TryAcquire(ctx, 1, 5*time.Second))
		avail, err := sem.Available(ctx)
		require.NoError(t, err)
		assert.Zero(t, avail, "taken once")
		require.NoError(t, sem.Release(ctx, 1))
	})
}

// Finding 8: whatever happens to a release, the hold's context has ended
// when Unlock returns.
func TestFailedUnlockEndsContext(t *testing.T) {
	t.Parallel()
	eachKind(t, lockKinds, func(t *testing.T, k lockKind, c *distsync.Client, f *dstest.Faulty, l, other lockish) {
		held, err := l.TryLock(context.Background(), 0, 0)
		require.NoError(t, err)
		f.Inject(&dstest.Rule{Match: dstest.Script(k.release), Fault: dstest.LoseRequest})
		require.Error(t, l.Unlock(held))
		require.Error(t, held.Err(), "the context ended")
		f.Clear()
		require.NoError(t, l.Unlock(held), "a retry releases it")
	})
}

// Finding 12: a context cancelled while the granting attempt is on the wire
// gets ctx.Err() and leaves nothing held; a context that ends while the
// lock is held releases it.
func TestContextEndsHold(t *testing.T) {
	t.Parallel()
	eachKind(t, lockKinds, func(t *testing.T, k lockKind, c *distsync.Client, f *dstest.Faulty, l, other lockish) {
		ctx, cancel := context.WithCancel(context.Background())
		f.Inject(&dstest.Rule{Match: dstest.Script(k.acquire), Fault: dstest.Hook, Times: 1, Then: func() {
			heldNow(t, l, "the grant was applied before ctx ended")()
			cancel()
		}})
		_, err := l.TryLock(ctx, 0, 0)
		require.ErrorIs(t, err, context.Canceled)
		freeWithin(t, other, 5*time.Second, "the grant that came back after ctx ended was given back")

		ctx, cancel = context.WithCancel(context.Background())
		held, err := l.TryLock(ctx, 0, 0)
		require.NoError(t, err)
		cancel()
		<-held.Done()
		freeWithin(t, other, 5*time.Second, "the acquisition ended with its context is released")
		assert.NoError(t, l.Unlock(held), "Unlock reports the release distsync made")
		assert.ErrorIs(t, l.Unlock(held), distsync.ErrNotHeld)
	})
}

// Finding 10: with PreferWriters, a writer that gives up wakes the readers
// it held back.
func TestLeavingWriterWakesReaders(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	c := dstest.ClientOn(t, s) // the default 30 s waiter window
	name := dstest.Name(t)
	rw, err := c.RWLock(name, rwlock.PreferWriters())
	require.NoError(t, err)
	ctx := context.Background()
	r1, err := rw.Read().Lock(ctx)
	require.NoError(t, err)
	wrote := make(chan error, 1)
	go func() {
		_, err := rw.Write().TryLock(ctx, 500*time.Millisecond, 0)
		wrote <- err
	}()
	dstest.WaitWaiters(t, c, rw.Write().Key()+":wwaiters", 1)
	read := make(chan error, 1)
	go func() {
		// A deadline far shorter than the writer's 30 s window: only a
		// wake-up when the writer leaves lets the reader in before it.
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		r2, err := rw.Read().Lock(rctx)
		if err == nil {
			err = rw.Read().Unlock(r2)
		}
		read <- err
	}()
	dstest.WaitWaiters(t, c, rw.Write().Key()+":rwaiters", 1)
	require.ErrorIs(t, <-wrote, distsync.ErrNotAcquired)
	require.NoError(t, <-read, "the reader held back by the writer enters once it left")
	require.NoError(t, rw.Read().Unlock(r1))
}

// Finding 11: a permit hand-off wakes about one waiter, not all.
func TestPermitHandOffWakesOne(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	c := dstest.ClientOn(t, s)
	ps := permitSem(t, c, dstest.Name(t), 1)
	ctx := context.Background()
	first, err := ps.Acquire(ctx)
	require.NoError(t, err)
	const waiters = 20
	var wg sync.WaitGroup
	for range waiters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := ps.Acquire(ctx)
			if assert.NoError(t, err) {
				assert.NoError(t, ps.Release(ctx, p))
			}
		}()
	}
	dstest.WaitWaiters(t, c, ps.Key()+":waiters", waiters)
	wakesBefore := c.Stats().NotifierWakes
	require.NoError(t, ps.Release(ctx, first))
	wg.Wait()
	wakesAfter := c.Stats().NotifierWakes
	wakes := wakesAfter - wakesBefore
	t.Logf("%d hand-offs, %d wake-ups", waiters, wakes)
	assert.LessOrEqual(t, wakes, int64(waiters*5/4), "about one wake-up per hand-off")
}

// Finding 4: every acquisition of every primitive honours ReplicaAck and
// undoes what too few replicas acknowledged.
func TestReplicaAckSemaphores(t *testing.T) {
	t.Parallel()
	c, replica := ackedClient(t)
	ctx := context.Background()
	sem := countingSem(t, c, "acked-sem", 1)
	ps := permitSem(t, c, "acked-permits", 1)

	replica.Pause()
	errSem := sem.TryAcquire(ctx, 1, 0)
	_, errPermit := ps.TryAcquire(ctx, 0, 0)
	replica.Resume()
	require.ErrorIs(t, errSem, distsync.ErrNotReplicated)
	require.ErrorIs(t, errPermit, distsync.ErrNotReplicated)
	require.Eventually(t, func() bool {
		avail, err1 := sem.Available(ctx)
		held, err2 := ps.Held(ctx)
		return err1 == nil && err2 == nil && avail == 1 && held == 0
	}, 10*time.Second, 5*time.Millisecond, "the unacknowledged grants were given back")

	require.NoError(t, sem.TryAcquire(ctx, 1, 0), "granted once the replica answers")
	require.NoError(t, sem.Release(ctx, 1))
	p, err := ps.TryAcquire(ctx, 0, 0)
	require.NoError(t, err)
	require.NoError(t, ps.Release(ctx, p))
}

// Finding 7: a waiter survives connection loss and a server restart within
// its budget.
func TestWaiterSurvivesRestartAndCut(t *testing.T) {
	t.Parallel()
	t.Run("restart", func(t *testing.T) {
		t.Parallel()
		s := redistest.Start(t)
		redistest.RequireProcess(t, s)
		holder := mutexOf(t, dstest.ClientOn(t, s), "lock")
		w := mutexOf(t, dstest.ClientOn(t, s), "lock")
		ctx := context.Background()
		_, err := holder.TryLock(ctx, 0, 2*time.Second)
		require.NoError(t, err)
		got := make(chan error, 1)
		go func() {
			held, err := w.TryLock(ctx, 20*time.Second, 0)
			if err == nil {
				err = w.Unlock(held)
			}
			got <- err
		}()
		dstest.WaitWaiters(t, dstest.ClientOn(t, s), w.Key()+":waiters", 1)
		s.Restart(t) // no persistence: the lock is gone, and every connection
		require.NoError(t, receive(t, got, "waiter"), "the waiter rides out the restart")
	})
	t.Run("cut", func(t *testing.T) {
		t.Parallel()
		s := redistest.Start(t)
		p := startCutProxy(t, s.Addr())
		holder := mutexOf(t, dstest.ClientOn(t, s), "lock")
		c := connect(t, distsync.Options{Addrs: []string{p.Addr()}, RESP2: s.RESP2()})
		w := mutexOf(t, c, "lock")
		ctx := context.Background()
		held, err := holder.Lock(ctx)
		require.NoError(t, err)
		got := make(chan error, 1)
		go func() {
			h, err := w.TryLock(ctx, 20*time.Second, 0)
			if err == nil {
				err = w.Unlock(h)
			}
			got <- err
		}()
		dstest.WaitWaiters(t, dstest.ClientOn(t, s), w.Key()+":waiters", 1)
		p.cut()
		p.sever()
		time.Sleep(200 * time.Millisecond) // the length of the cut
		require.NoError(t, holder.Unlock(held))
		p.heal()
		require.NoError(t, receive(t, got, "waiter"), "the waiter rides out the cut")
	})
}

// Finding 13: a grant a paused master applies after its round was decided
// is released once the master answers again. The master is paused during a
// round. The grant's request waits on its connection until its deadline,
// which closes that connection; a release sent to that master meanwhile
// needs a new connection, whose handshake the paused master does not answer
// either, and is given up. When it resumes, the master still reads the
// grant it had queued and applies it: only a release retried until then
// frees the lock before its 30 s lease ends.
func TestRedlockLateGrantReleased(t *testing.T) {
	t.Parallel()
	masters := []*redistest.Server{redistest.Start(t), redistest.Start(t), redistest.Start(t)}
	redistest.RequireProcess(t, masters[2])
	ctx := context.Background()
	// A round on other Clients caches the scripts on every master: a queued
	// EVALSHA would otherwise get NOSCRIPT when the master resumes, and no
	// late grant would ever be applied.
	var lockers []distsync.Locker
	for _, s := range masters {
		lockers = append(lockers, mutexOf(t, dstest.ClientOn(t, s), "red"))
	}
	warm, err := redlock.New(lockers)
	require.NoError(t, err)
	held, err := warm.TryLock(ctx, 0, 0)
	require.NoError(t, err)
	require.NoError(t, warm.Unlock(held))

	// The paused master's Client is made as New makes one, on connections
	// the test sees (conns, in the order they opened).
	var mu sync.Mutex
	var conns []net.Conn
	opt := masters[2].ClientOption()
	opt.DisableAutoPipelining = true
	opt.DialCtxFn = func(ctx context.Context, addr string, d *net.Dialer, _ *tls.Config) (net.Conn, error) {
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
		}
		return conn, err
	}
	rc, err := rueidis.NewClient(opt)
	require.NoError(t, err)
	t.Cleanup(rc.Close)
	c, err := distsync.FromClient(rc, distsync.Options{})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	paused := mutexOf(t, c, "red")
	// One lone call opens the pooled connection the grant's request takes.
	_, err = paused.IsLocked(ctx)
	require.NoError(t, err)
	mu.Lock()
	opened := slices.Clone(conns)
	mu.Unlock()
	require.Len(t, opened, 2, "the pipelined connection and the pooled one")
	// The pipelined connection goes, as one the master dropped: a release
	// sent during the pause then finds no connection open and needs a new
	// one, as in the finding. (Left open, it could carry a release that
	// reaches the master before or after the grant, by chance.)
	require.NoError(t, opened[0].Close())
	rl, err := redlock.New([]distsync.Locker{lockers[0], lockers[1], paused})
	require.NoError(t, err)

	raw, err := rueidis.NewClient(masters[2].ClientOption())
	require.NoError(t, err)
	defer raw.Close()
	fence := core.FenceOf(rl.Key(), false) // written by every grant
	get := func() (string, error) {
		return raw.Do(ctx, raw.B().Get().Key(fence).Build()).ToString()
	}
	before, err := get()
	require.NoError(t, err)

	masters[2].Pause()
	held, err = rl.TryLock(ctx, 0, 0)
	require.NoError(t, err, "granted by the two that answer")
	require.NoError(t, rl.Unlock(held))
	// The length of the pause: longer than a request waits (5 s) twice
	// over, so that the grant's request and a release sent after it have
	// both been given up by their senders when the master resumes.
	time.Sleep(12 * time.Second)
	masters[2].Resume()
	require.Eventually(t, func() bool {
		after, err := get()
		return err == nil && after != before
	}, 5*time.Second, 10*time.Millisecond, "the resumed master applied the late grant")
	require.Eventually(t, func() bool {
		n, err := raw.Do(ctx, raw.B().Exists().Key(rl.Key()).Build()).AsInt64()
		return err == nil && n == 0
	}, 15*time.Second, 10*time.Millisecond, "the late grant on the resumed master is released, long before its 30 s lease")
}

// Extend moves the end of an explicit lease, on the server and in the
// acquisition's context; it refuses a watchdog acquisition and does not
// revive an ended lease.
func TestExtendExplicitLease(t *testing.T) {
	t.Parallel()
	eachKind(t, lockKinds, func(t *testing.T, k lockKind, c *distsync.Client, f *dstest.Faulty, l, other lockish) {
		ctx := context.Background()
		held, err := l.TryLock(ctx, 0, 500*time.Millisecond)
		require.NoError(t, err)
		require.NoError(t, l.Extend(held, 10*time.Second))
		ttl, err := l.TTL(ctx)
		require.NoError(t, err)
		assert.Greater(t, ttl, 5*time.Second)
		time.Sleep(700 * time.Millisecond) // past the first lease
		require.NoError(t, held.Err(), "the context follows the extended lease")
		inner, err := l.TryLock(held, 0, 0)
		require.NoError(t, err)
		assert.ErrorIs(t, l.Extend(inner, time.Second), distsync.ErrInvalidArgument, "the watchdog renews it")
		assert.ErrorIs(t, l.Extend(held, 0), distsync.ErrInvalidArgument)
		require.NoError(t, l.Unlock(inner))
		require.NoError(t, l.Unlock(held))

		short, err := l.TryLock(ctx, 0, 100*time.Millisecond)
		require.NoError(t, err)
		<-short.Done()
		assert.ErrorIs(t, l.Extend(short, time.Second), distsync.ErrNotHeld, "an ended lease is not revived")
		freeWithin(t, other, time.Second, "")
	})
}

// Every lock-like primitive answers the same questions: whether it is held,
// by how many owners, the caller's hold count, the lease left and how many
// wait.
func TestSameInspectionCalls(t *testing.T) {
	t.Parallel()
	eachKind(t, lockKinds, func(t *testing.T, k lockKind, c *distsync.Client, f *dstest.Faulty, l, other lockish) {
		type inspector interface {
			Holders(context.Context) (int, error)
			Waiting(context.Context) (int, error)
		}
		ctx := context.Background()
		held, err := l.TryLock(ctx, 0, 0)
		require.NoError(t, err)
		ok, err := l.IsLocked(ctx)
		require.NoError(t, err)
		assert.True(t, ok)
		n, err := l.(inspector).Holders(ctx)
		require.NoError(t, err)
		assert.Equal(t, 1, n)
		if k.name == "rwlock-read" {
			require.NoError(t, l.Unlock(held))
			return // readers do not wait for readers
		}
		got := make(chan error, 1)
		go func() {
			octx, err := other.TryLock(ctx, 10*time.Second, 0)
			if err == nil {
				err = other.Unlock(octx)
			}
			got <- err
		}()
		require.Eventually(t, func() bool {
			w, err := l.(inspector).Waiting(ctx)
			return err == nil && w == 1
		}, 10*time.Second, time.Millisecond, "one waiter")
		require.NoError(t, l.Unlock(held))
		require.NoError(t, <-got)
	})
}

// The renew path through faults: renewals whose replies are lost (the
// server applied them) or whose requests are lost are retried and the hold
// lives on; renewals that never get through end the hold's context, and
// only then does another owner get the lock.
func TestRenewalFaults(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	// Long enough that a renewal retried after a fault still lands well
	// within the lease on a loaded machine (the retry comes a quarter of
	// the time left after the failure).
	const lease = 1500 * time.Millisecond
	for _, k := range lockKinds[:3] {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			c, f := faultyClient(t, s, lease)
			l := k.make(t, c, dstest.Name(t))
			other := k.make(t, dstest.ClientOn(t, s), dstest.Name(t))
			ctx := context.Background()
			held, err := l.TryLock(ctx, 0, 0)
			require.NoError(t, err)
			lost := f.Inject(&dstest.Rule{Match: dstest.Script(renewScript[k.name]), Fault: dstest.LoseReply, Times: 1})
			dropped := f.Inject(&dstest.Rule{Match: dstest.Script(renewScript[k.name]), Fault: dstest.LoseRequest, Times: 1})
			late := f.Inject(&dstest.Rule{Match: dstest.Script(renewScript[k.name]), Fault: dstest.LateReply, Delay: lease / 10, Times: 1})
			<-late.Hit()
			time.Sleep(2 * lease) // two leases after the faults: only renewals keep it
			require.NoError(t, held.Err(), "the hold outlives a lost reply, a lost request and a late reply")
			assert.Equal(t, []int{1, 1, 1}, []int{lost.Hits(), dropped.Hits(), late.Hits()}, "each fault hit one renewal")
			ok, err := other.IsLocked(ctx)
			require.NoError(t, err)
			require.True(t, ok)

			f.Inject(&dstest.Rule{Match: dstest.Script(renewScript[k.name]), Fault: dstest.LoseRequest})
			<-held.Done()
			ended := time.Now()
			assert.ErrorIs(t, context.Cause(held), distsync.ErrLeaseLost)
			got, err := other.TryLock(ctx, 10*time.Second, 0)
			require.NoError(t, err)
			assert.False(t, time.Now().Before(ended), "granted to another only after the holder's context ended")
			require.NoError(t, other.Unlock(got))
		})
	}
}

// A renewal the server applied but whose reply came too late leaves the
// lease alive there after the holder's context ended with ErrLeaseLost: the
// lost hold is given back, so another owner gets the lock within a round
// trip of the loss, not a lease later.
func TestLateRenewalIsGivenBack(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	const lease = 3 * time.Second
	for _, k := range lockKinds[:3] {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			c, f := faultyClient(t, s, lease)
			l := k.make(t, c, dstest.Name(t))
			other := k.make(t, dstest.ClientOn(t, s), dstest.Name(t))
			ctx := context.Background()
			held, err := l.TryLock(ctx, 0, 0)
			require.NoError(t, err)
			// Every renewal is applied; its reply comes after the lease.
			late := f.Inject(&dstest.Rule{Match: dstest.Script(renewScript[k.name]), Fault: dstest.LateReply, Delay: time.Minute})
			<-held.Done()
			require.ErrorIs(t, context.Cause(held), distsync.ErrLeaseLost)
			require.Positive(t, late.Hits(), "the renewals were applied, their replies held back")
			// Without the give-back the last renewal, sent shortly before
			// the local deadline, keeps the lock for most of a lease more.
			got, err := other.TryLock(ctx, lease/3, 0)
			require.NoError(t, err, "the lock was given back when its lease was lost")
			require.NoError(t, other.Unlock(got))
		})
	}
}

// lockResult is the outcome of a TryLock run by tryLockAsync.
type lockResult struct {
	ctx context.Context
	err error
}

// tryLockAsync runs l.TryLock with wait and the watchdog lease in a
// goroutine and returns where its outcome will be.
func tryLockAsync(l distsync.Locker, wait time.Duration) <-chan lockResult {
	ch := make(chan lockResult, 1)
	go func() {
		ctx, err := l.TryLock(context.Background(), wait, 0)
		ch <- lockResult{ctx, err}
	}()
	return ch
}

// The caller gives a hold up when it calls Unlock: the context ends before
// the release is sent, so a waiter on another Client that the release lets
// in never finds it live, whether the reply comes late or never.
func TestUnlockEndsContextFirst(t *testing.T) {
	t.Parallel()
	for name, fault := range map[string]dstest.Fault{"late": dstest.LateReply, "lost": dstest.LoseReply} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			eachKind(t, lockKinds, func(t *testing.T, k lockKind, c *distsync.Client, f *dstest.Faulty, l, other lockish) {
				held, err := l.TryLock(context.Background(), 0, 0)
				require.NoError(t, err)
				waiter := tryLockAsync(other, 10*time.Second)
				// The release is applied; its reply comes 2 s late, or never
				// (Unlock gives up after its retries).
				f.Inject(&dstest.Rule{Match: dstest.Script(k.release), Fault: fault, Delay: 2 * time.Second, Times: 1})
				if fault == dstest.LoseReply {
					f.Inject(&dstest.Rule{Match: dstest.Script(k.release), Fault: dstest.LoseRequest})
				}
				unlocked := make(chan error, 1)
				go func() { unlocked <- l.Unlock(held) }()
				w := <-waiter
				require.NoError(t, w.err)
				assert.Error(t, held.Err(), "the waiter holds while the released context lives")
				assert.ErrorIs(t, context.Cause(held), distsync.ErrReleased)
				if err := <-unlocked; fault == dstest.LateReply {
					require.NoError(t, err)
				} else {
					require.ErrorIs(t, err, dstest.ErrInjected)
				}
				require.NoError(t, other.Unlock(w.ctx))
			})
		})
	}
}

// Unlock returns nil only if the acquisition's own release was applied: an
// acquisition another Client released by id (UnlockID) was not released by
// its holder's Unlock, which says ErrNotHeld, for the outer acquisition as
// for a re-entry; nor was a permit another Client returned by ReleaseID. The release by id stays exact: one retried after a lost
// reply answers as its first attempt did, and only once. The holder's Client
// spins (no control channel), so that its Unlock reaches the server.
func TestUnlockAfterReleaseByID(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	name := dstest.Name(t)
	spin := func(o *distsync.Options) { o.Spin = distsync.Spin{Min: time.Millisecond, Max: 20 * time.Millisecond} }
	holder, err := dstest.ClientOn(t, s, spin).Mutex(name)
	require.NoError(t, err)
	oc, f := faultyClient(t, s, 0)
	other, err := oc.Mutex(name)
	require.NoError(t, err)
	ctx := context.Background()

	outer, err := holder.TryLock(ctx, 0, 0)
	require.NoError(t, err)
	inner, err := holder.Lock(outer)
	require.NoError(t, err)
	outerID, err := holder.HoldID(outer)
	require.NoError(t, err)
	innerID, err := holder.HoldID(inner)
	require.NoError(t, err)

	// The release by id is applied, its reply lost: its retry learns it.
	f.Inject(&dstest.Rule{Match: dstest.Script(kindNamed("mutex").release), Fault: dstest.LoseReply, Times: 1})
	require.NoError(t, other.UnlockID(ctx, innerID))
	assert.ErrorIs(t, other.UnlockID(ctx, innerID), distsync.ErrNotHeld, "reported once")
	assert.ErrorIs(t, holder.Unlock(inner), distsync.ErrNotHeld, "the re-entry was released by another Client")
	n, err := holder.HoldCount(outer)
	require.NoError(t, err)
	assert.Equal(t, 1, n)

	require.NoError(t, other.UnlockID(ctx, outerID))
	assert.ErrorIs(t, holder.Unlock(outer), distsync.ErrNotHeld, "released by another Client")
	locked, err := holder.IsLocked(ctx)
	require.NoError(t, err)
	assert.False(t, locked)

	// A permit returned by ReleaseID from another Client.
	ps := permitSem(t, dstest.ClientOn(t, s, spin), name+"-permits", 1)
	p, err := ps.Acquire(ctx)
	require.NoError(t, err)
	ops, err := oc.PermitSemaphore(name + "-permits")
	require.NoError(t, err)
	require.NoError(t, ops.ReleaseID(ctx, p.ID()))
	assert.ErrorIs(t, ops.ReleaseID(ctx, p.ID()), distsync.ErrNotHeld, "reported once")
	assert.ErrorIs(t, ps.Release(ctx, p), distsync.ErrNotHeld, "returned by another Client")
	avail, err := ps.Available(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(1), avail, "returned once")
}

// Every take-over from another Client tells the replaced holder on its
// Client's control channel, and its context ends at once, not at its next
// renewal: ForceUnlock of each lock kind, UnlockID, a permit's ReleaseID,
// ForceResign. The
// holder's renewals are lost, so that nothing but the push can end its hold
// before its 30 s lease.
func TestTakeOverEndsHolderByPush(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	type forcer interface {
		ForceUnlock(ctx context.Context) (bool, error)
	}
	type takeOver struct {
		name string
		// hold takes the lock on c and returns its context and the script
		// text of its renewal; take takes it over from other.
		hold func(t *testing.T, c *distsync.Client, name string) (context.Context, string)
		take func(t *testing.T, other *distsync.Client, name string, held context.Context)
	}
	var cases []takeOver
	for _, k := range lockKinds {
		cases = append(cases, takeOver{k.name + "/ForceUnlock", func(t *testing.T, c *distsync.Client, name string) (context.Context, string) {
			held, err := k.make(t, c, name).TryLock(context.Background(), 0, 0)
			require.NoError(t, err)
			return held, renewScript[k.name]
		}, func(t *testing.T, other *distsync.Client, name string, _ context.Context) {
			was, err := k.make(t, other, name).(forcer).ForceUnlock(context.Background())
			require.NoError(t, err)
			require.True(t, was)
		}})
	}
	var holderMutex *mutex.Mutex
	cases = append(cases, takeOver{"mutex/UnlockID", func(t *testing.T, c *distsync.Client, name string) (context.Context, string) {
		var err error
		holderMutex, err = c.Mutex(name)
		require.NoError(t, err)
		held, err := holderMutex.TryLock(context.Background(), 0, 0)
		require.NoError(t, err)
		return held, renewScript["mutex"]
	}, func(t *testing.T, other *distsync.Client, name string, held context.Context) {
		id, err := holderMutex.HoldID(held)
		require.NoError(t, err)
		m, err := other.Mutex(name)
		require.NoError(t, err)
		require.NoError(t, m.UnlockID(context.Background(), id))
	}})
	var heldPermit *semaphore.Permit
	cases = append(cases, takeOver{"permit/ReleaseID", func(t *testing.T, c *distsync.Client, name string) (context.Context, string) {
		var err error
		heldPermit, err = permitSem(t, c, name, 1).Acquire(context.Background())
		require.NoError(t, err)
		return heldPermit.Context(), "Extend a held permit's lease"
	}, func(t *testing.T, other *distsync.Client, name string, _ context.Context) {
		ps, err := other.PermitSemaphore(name)
		require.NoError(t, err)
		require.NoError(t, ps.ReleaseID(context.Background(), heldPermit.ID()))
	}})
	cases = append(cases, takeOver{"election/ForceResign", func(t *testing.T, c *distsync.Client, name string) (context.Context, string) {
		l, _, err := electionOf(t, c, name).Campaign(context.Background(), "leader")
		require.NoError(t, err)
		return l, "Extend the leader's lease"
	}, func(t *testing.T, other *distsync.Client, name string, _ context.Context) {
		was, err := electionOf(t, other, name).ForceResign(context.Background())
		require.NoError(t, err)
		require.True(t, was)
	}})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			name := dstest.Name(t)
			c, f := faultyClient(t, s, 30*time.Second)
			held, renew := tc.hold(t, c, name)
			f.Inject(&dstest.Rule{Match: dstest.Script(renew), Fault: dstest.LoseRequest})
			dstest.WaitControl(t, c)
			tc.take(t, dstest.ClientOn(t, s), name, held)
			took := time.Now()
			select {
			case <-held.Done():
				t.Logf("the holder's context ended %v after the take-over returned", time.Since(took))
			case <-time.After(10 * time.Second): // a third of the lease: no renewal told it
				t.Fatal("the holder's context lives on after the take-over")
			}
			assert.ErrorIs(t, context.Cause(held), distsync.ErrLeaseLost)
		})
	}
}

// A multilock's and a redlock's Unlock end the composed context before the
// members' releases are sent: a waiter that a member's release lets in never
// finds it live, while that release's reply comes late.
func TestComposedUnlockEndsContextFirst(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	compose := map[string]func(ls []distsync.Locker) (distsync.Locker, error){
		"multilock": func(ls []distsync.Locker) (distsync.Locker, error) { return multilock.New(ls) },
		// One master: a redlock's members are one name on distinct masters.
		"redlock": func(ls []distsync.Locker) (distsync.Locker, error) { return redlock.New(ls[:1]) },
	}
	for kind, mk := range compose {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			c, f := faultyClient(t, s, 0)
			name := dstest.Name(t)
			var members []distsync.Locker
			for _, n := range []string{name + "-a", name + "-b"} {
				m, err := c.Mutex(n)
				require.NoError(t, err)
				members = append(members, m)
			}
			l, err := mk(members)
			require.NoError(t, err)
			held, err := l.TryLock(context.Background(), 0, 0)
			require.NoError(t, err)
			other, err := dstest.ClientOn(t, s).Mutex(name + "-a")
			require.NoError(t, err)
			waiter := tryLockAsync(other, 10*time.Second)
			f.Inject(&dstest.Rule{Match: dstest.Script(kindNamed("mutex").release), Fault: dstest.LateReply, Delay: 2 * time.Second})
			unlocked := make(chan error, 1)
			go func() { unlocked <- l.Unlock(held) }()
			w := <-waiter
			require.NoError(t, w.err)
			assert.Error(t, held.Err(), "a member is held elsewhere while the composed context lives")
			assert.ErrorIs(t, context.Cause(held), distsync.ErrReleased)
			require.NoError(t, <-unlocked)
			require.NoError(t, other.Unlock(w.ctx))
		})
	}
}
