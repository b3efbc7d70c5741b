// Package acquire is the one acquire-and-wait loop every distsync primitive
// uses: try; if refused, subscribe to the primitive's channel and try again
// (closing the race with a release that happened before the subscription);
// then sleep until a notification, the retry time the script returned, the
// caller's wait budget or ctx.Done(), and try again. There is no polling: the
// timer only bounds a sleep by what the server said (a lease that will end).
package acquire

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/distsync/distsync/internal/core"
)

// Attempt tries once. waiter is "" on the first try, when the caller is not
// yet registered as waiting; afterwards it is the waiter's id, and a refused
// attempt registers the waiter so releases notify it. It returns whether it
// acquired and, if not, after how long trying again may succeed (0: unknown).
// Attempts run on a context without the caller's cancellation (bounded by
// core.ReleaseTimeout), so a grant on the wire is never orphaned.
type Attempt func(ctx context.Context, waiter string) (ok bool, retry time.Duration, err error)

// Wait describes how to wait.
type Wait struct {
	Notifier core.Notifier
	Channel  string
	// Waiter identifies this waiter in the waiter set and in targeted wake-ups.
	Waiter string
	// Budget is how long to keep trying: 0 tries once, < 0 waits until ctx is done.
	Budget time.Duration
	// Window bounds a sleep when the script gave no retry time (Window/2).
	Window time.Duration
	// Leave, if set, unregisters the waiter when it gives up after having
	// registered (best effort; waiter entries also expire by themselves).
	Leave func(ctx context.Context)
}

// Stats counts why waiters woke, for tests and benchmarks.
type Stats struct {
	Attempts atomic.Int64 // attempts made
	Notified atomic.Int64 // wake-ups by notification
	Timer    atomic.Int64 // wake-ups by the retry timer
}

var stats Stats

// Counters returns the process-wide counters.
func Counters() *Stats { return &stats }

// BeforeSubscribe, when set, runs between the first refused attempt and the
// subscription: tests use it to release in exactly that gap.
var BeforeSubscribe atomic.Pointer[func()]

// Do runs the loop until try acquires (nil), the budget is spent (an error
// wrapping core.ErrNotAcquired) or ctx is done (ctx.Err()).
func Do(ctx context.Context, w Wait, try Attempt) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	start := time.Now()
	ok, _, err := attempt(ctx, try, "")
	if err != nil || ok {
		return err
	}
	if w.Budget == 0 {
		return core.ErrNotAcquired
	}
	if h := BeforeSubscribe.Load(); h != nil {
		(*h)()
	}
	var deadline time.Time
	sctx := ctx
	if w.Budget > 0 {
		deadline = start.Add(w.Budget)
		var cancel context.CancelFunc
		sctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	sub, err := w.Notifier.Subscribe(sctx, w.Channel, w.Waiter)
	if err != nil {
		if ctx.Err() == nil && sctx.Err() != nil {
			return fmt.Errorf("%w (waited %v)", core.ErrNotAcquired, w.Budget)
		}
		return err
	}
	defer sub.Close()

	registered := false
	leave := func() {
		if registered && w.Leave != nil {
			lctx, cancel := core.IOContext(ctx, core.ReleaseTimeout)
			defer cancel()
			w.Leave(lctx)
		}
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		ok, retry, err := attempt(ctx, try, w.Waiter)
		registered = true
		if err != nil {
			leave()
			return err
		}
		if ok {
			return nil
		}
		sleep := retry
		if sleep <= 0 {
			sleep = w.Window / 2
		}
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left <= 0 {
				leave()
				return fmt.Errorf("%w (waited %v)", core.ErrNotAcquired, w.Budget)
			}
			sleep = min(sleep, left)
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(sleep)
		select {
		case <-sub.C():
			stats.Notified.Add(1)
		case <-timer.C:
			stats.Timer.Add(1)
		case <-ctx.Done():
			leave()
			return ctx.Err()
		case <-sub.Done():
			return core.ErrClosed
		}
	}
}

func attempt(ctx context.Context, try Attempt, waiter string) (bool, time.Duration, error) {
	stats.Attempts.Add(1)
	actx, cancel := core.IOContext(ctx, core.ReleaseTimeout)
	defer cancel()
	return try(actx, waiter)
}
