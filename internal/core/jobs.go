package core

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/rueidis"
)

// ReleaseMemory is how long the server remembers a release (in the
// primitive's set of finished acquisitions), so that a release retried
// within it after a lost reply is recognised.
const ReleaseMemory = 10 * time.Second

// CloseGrace is how long Close lets background releases finish before it
// cancels them.
const CloseGrace = time.Second

// CloseGiveBack bounds the releases of the holds Close gives back, and the
// one attempt to give back a grant that lands while closing.
const CloseGiveBack = time.Second

// Drift is the safety margin by which a holder's view of a lease ends
// before the lease's end by this process's clock: lease/100 + 2 ms, for
// clock rate differences between this process and the server (as in
// Redlock). The watchdog and explicit leases both use it.
func Drift(lease time.Duration) time.Duration { return lease/100 + 2*time.Millisecond }

// UndoLife is how long the server remembers the release of an acquisition
// some request of which had an unknown outcome: such a request may still be
// on the wire, and must find the acquisition finished for as long as its
// grant could live.
func (c *Core) UndoLife(lease time.Duration) time.Duration {
	if lease == 0 {
		lease = c.Lease
	}
	return lease + ReleaseMemory
}

var (
	acqPrefix = func() string {
		var b [6]byte
		if _, err := io.ReadFull(rand.Reader, b[:]); err != nil {
			panic("distsync: no randomness: " + err.Error())
		}
		return hex.EncodeToString(b[:])
	}()
	acqSeq atomic.Uint64
)

// NewAcqID returns a new acquisition id: unique across processes (a random
// prefix per process) and cheap.
func NewAcqID() string {
	return acqPrefix + strconv.FormatUint(acqSeq.Add(1), 36)
}

// Unknown reports whether a request that failed with err may have been
// applied by the server: any failure but the server's own error reply.
func Unknown(err error) bool {
	if err == nil {
		return false
	}
	return RedisErr(err) == nil && !errors.Is(err, ErrNotAcquired) && !errors.Is(err, ErrWrongKind)
}

// Transient reports whether err is a failure that trying again can cure: the
// connection failed or timed out, or the server is failing over, loading or
// restarting. A cancelled context, a closed Client and a typed distsync
// error are not transient.
func Transient(err error) bool {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		// A connection being made failed, even as cancelled: rueidis makes
		// one connection for the requests that wait for it, on the context
		// of one of them, which need not be the caller's (callers check
		// their own).
		return true
	}
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, ErrClosed) || errors.Is(err, rueidis.ErrClosing) {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true // an attempt's own bound, not the caller's (checked by callers)
	}
	var ne net.Error
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.As(err, &ne) {
		return true
	}
	if re := RedisErr(err); re != nil {
		_, redirect := re.IsRedirect()
		msg := re.Error()
		return redirect || re.IsTryAgain() || re.IsClusterDown() || re.IsLoading() ||
			strings.HasPrefix(msg, "READONLY") || strings.HasPrefix(msg, "MASTERDOWN")
	}
	return false
}

// ClosedErr wraps ErrClosed around the error of a request made on a rueidis
// client that was closed (rueidis.ErrClosing), so errors.Is finds it.
func ClosedErr(err error) error {
	if errors.Is(err, rueidis.ErrClosing) && !errors.Is(err, ErrClosed) {
		return fmt.Errorf("%w: %w", ErrClosed, err)
	}
	return err
}

// Retry runs f until it succeeds, fails for good (not Transient), budget
// has passed or ctx is done, backing off between attempts; each attempt's
// context ends with the budget. It returns f's last error.
func Retry(ctx context.Context, budget time.Duration, f func(ctx context.Context) error) error {
	return retry(ctx, false, budget, f)
}

// RetryDetached is Retry(context.WithoutCancel(ctx), budget, f), each
// attempt's context in one allocation: a release's retries, which go on
// whatever becomes of the context it was asked with.
func RetryDetached(ctx context.Context, budget time.Duration, f func(ctx context.Context) error) error {
	return retry(ctx, true, budget, f)
}

// retry is Retry, on context.WithoutCancel(ctx) when detached.
func retry(ctx context.Context, detached bool, budget time.Duration, f func(ctx context.Context) error) error {
	now := time.Now()
	deadline := now.Add(budget)
	var done <-chan struct{} // of ctx, nil when detached
	if !detached {
		done = ctx.Done()
	}
	var b Backoff
	for ; ; now = time.Now() {
		var ictx context.Context
		var cancel context.CancelFunc
		switch {
		case detached:
			ictx, cancel = bound(ctx, true, now, deadline)
		case done == nil:
			ictx, cancel = until(ctx, now, deadline)
		default:
			ictx, cancel = context.WithDeadline(ctx, deadline)
		}
		err := f(ictx)
		spent := ictx.Err() != nil // the bound, which may end a little before deadline
		cancel()
		if err == nil || !Transient(err) || !detached && ctx.Err() != nil || spent {
			return err
		}
		d := b.Next()
		if time.Until(deadline) < d {
			return err
		}
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-done:
			t.Stop()
			return err
		}
	}
}

// Backoff is the delay between retries of a transient failure: 10 ms,
// doubling to at most 1 s.
type Backoff struct{ n int }

// Next returns the next delay.
func (b *Backoff) Next() time.Duration {
	d := 10 * time.Millisecond << min(b.n, 7)
	b.n++
	return min(d, time.Second)
}

// Reset starts over.
func (b *Backoff) Reset() { b.n = 0 }

// Track registers an operation (an acquisition) that Close waits for; it
// returns ErrClosed after Close. Each successful Track needs an Untrack.
func (c *Core) Track() error {
	if c == nil {
		return ErrNoClient
	}
	c.jobsMu.Lock()
	defer c.jobsMu.Unlock()
	if c.closed.Load() {
		return ErrClosed
	}
	c.jobs++
	return nil
}

// Untrack ends an operation registered by Track.
func (c *Core) Untrack() {
	c.jobsMu.Lock()
	defer c.jobsMu.Unlock()
	c.jobs--
	if c.jobs == 0 && c.idle != nil {
		close(c.idle)
		c.idle = nil
		c.jobsDone = true
	}
}

// Go runs f in a goroutine that Close waits for (at most CloseGrace, then
// its context is cancelled with a cause wrapping ErrClosed). Once Close has
// returned, Go runs nothing and returns false.
func (c *Core) Go(f func(ctx context.Context)) bool {
	c.jobsMu.Lock()
	if c.jobsDone {
		c.jobsMu.Unlock()
		return false
	}
	c.jobs++
	c.jobsMu.Unlock()
	go func() {
		defer c.Untrack()
		f(c.jobCtx)
	}()
	return true
}

// Undo gives back acquisition id: a grant applied after its reply was lost,
// or after its acquirer gave up, must not be left held by nobody. The first
// attempt runs at once (for at most UndoFirst), so the lock is normally free
// again within a round trip; if it fails transiently, Undo goes on in the
// background (see Go), retrying until the grant it may have made would have
// ended (lease, or the watchdog lease when 0). release remembers the
// acquisition as finished for as long, so an attempt still on the wire is
// refused when it arrives.
func (c *Core) Undo(what, id string, lease time.Duration, release ReleaseFunc) {
	life := c.UndoLife(lease)
	attempt := func(ctx context.Context) error {
		_, err := release(ctx, id, life)
		return err
	}
	// Not cancelled with the background jobs at Close: a grant that lands
	// while closing gets this one bounded attempt before the connection
	// closes (Close waits for the operation that calls Undo).
	fctx, cancel := context.WithTimeout(context.WithoutCancel(c.jobCtx), UndoFirst)
	err := attempt(fctx)
	cancel()
	if !Transient(err) {
		if err != nil {
			c.Log.Warn("distsync: could not give back an acquisition; it ends with its lease", "lock", what, "err", err)
		}
		return
	}
	c.Go(func(ctx context.Context) {
		err := Retry(ctx, life, attempt)
		if err != nil && ctx.Err() == nil {
			c.Log.Warn("distsync: could not give back an acquisition; it ends with its lease", "lock", what, "err", err)
		}
	})
}

// UndoFirst bounds the first attempt of Undo, made before the failed
// acquisition returns.
const UndoFirst = time.Second

// WaitJobs is Close's wait for tracked operations and background jobs: at
// most grace, then their context is cancelled and Close waits for them to
// return. Call it after SetClosed.
func (c *Core) WaitJobs(grace time.Duration) {
	c.jobsMu.Lock()
	if c.jobs == 0 {
		c.jobsDone = true
		c.jobsMu.Unlock()
		c.jobStop(ErrClosed)
		return
	}
	idle := make(chan struct{})
	c.idle = idle
	c.jobsMu.Unlock()
	t := time.NewTimer(grace)
	select {
	case <-idle:
		t.Stop()
	case <-t.C:
		c.jobStop(ErrClosed)
		<-idle
	}
	c.jobStop(ErrClosed)
}
