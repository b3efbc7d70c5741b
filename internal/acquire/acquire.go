// Package acquire is the one acquire-and-wait loop every distsync primitive
// uses: try; if refused, subscribe to the primitive's channel and try again
// (closing the race with a release that happened before the subscription);
// then sleep until a notification, the retry time the script returned, the
// caller's wait budget or ctx.Done(), and try again. When the Client listens
// to the channel already, the waiter joins it before its first attempt,
// which then registers it: one attempt instead of two. A notification may
// also hand the waiter the lock (Wait.Handed): it then holds without
// another attempt. There is no polling: the
// timer only bounds a sleep by what the server said (a lease that will end).
package acquire

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/distsync/distsync/internal/core"
)

// Attempt tries once. waiter is "" on the first try, when the caller is not
// yet registered as waiting; afterwards it is the waiter's id, and a refused
// attempt registers the waiter so releases notify it. It returns whether it
// acquired and, if not, after how long trying again may succeed (0: unknown).
// Attempts run on the caller's context bounded by core.ReleaseTimeout; an
// attempt cut short may have been applied, and the caller gives back what it
// may have granted (core.Undo).
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
	// Spin, when Max > 0, makes the waiter poll with back-off instead of
	// subscribing: it registers (so that a fair queue keeps its place) but
	// is never notified, and sleeps Spin.Min, doubling to Spin.Max, never
	// past the retry time the attempt returned.
	Spin core.Spin
	// Closed, if set, reports the Client's closing (core.Core.Closed): a
	// sleep that ends because no subscription can come back (Sub.Done)
	// attempts to leave only when the Client closes, not when the rueidis
	// client under it was closed first, whose requests fail.
	Closed func() error
	// Leave, if set, unregisters the waiter when it gives up after having
	// registered; it is retried while it fails transiently, for at most
	// core.ReleaseTimeout (waiter entries also expire by themselves). It
	// must also give back a grant a release may have handed the waiter.
	Leave func(ctx context.Context) error
	// Handed, if set, takes a grant a release handed this waiter (the data
	// of the notification, see core.Subscription.Take): true when the
	// waiter now holds without another attempt, false to attempt (which
	// returns the grant, or refuses when it is not this acquisition's).
	Handed func(data string) bool
	// Bound is the longest sleep of a waiter nudged as the next in line
	// (core.Config.HandoffLease): the one before it may have vanished.
	Bound time.Duration
	// Track, when set, learns when the wait started and whether an attempt
	// was refused (the acquisition was contended), for Track.Report.
	Track *Track
	// Listening, when set, is told before each attempt whether the waiter
	// listens on Channel (its subscription is up; one that spins does
	// not), for the attempt to say so when it registers: a release may
	// then pass over a waiter whose Client no longer listens
	// (core/lib.lua, ds_listening).
	Listening *bool
	// Presence, when set, is a channel of this waiter's Client alone, where
	// Channel is shared by the waiters of every Client: nothing is
	// published on it. The waiter listens on it too (both subscriptions up,
	// or neither), and registers only then, so that a release may ask the
	// server whether the waiter's Client still listens (core/lib.lua,
	// ds_listening) and pass over the waiters of a process that died
	// (Lock.Presence). When its subscription comes back after a reconnect,
	// the waiter tries again: it may have been passed over meanwhile.
	Presence string
	// att, set by attempt.hold in place of Leave and Handed, is the
	// attempt whose leave and handed they are: no closure to allocate for
	// each acquisition.
	att *attempt
}

// leaves reports whether the waiter has a Leave.
func (w Wait) leaves() bool { return w.att != nil || w.Leave != nil }

// leave is Leave.
func (w Wait) leave(ctx context.Context) error {
	if w.att != nil {
		return w.att.leave(ctx)
	}
	return w.Leave(ctx)
}

// handed is Handed, false when there is none.
func (w Wait) handed(data string) bool {
	switch {
	case w.att != nil:
		return w.att.h.Lock.Handoff && w.att.handed(data)
	case w.Handed != nil:
		return w.Handed(data)
	}
	return false
}

// WaitFor returns how a waiter of c waits on channel: c's notifier (or
// c's back-off, when it spins), waiter window and spin settings.
func WaitFor(c *core.Core, channel, waiter string, budget time.Duration, leave func(ctx context.Context) error) Wait {
	return Wait{Notifier: c.Notifier, Channel: channel, Waiter: waiter, Budget: budget, Window: c.WaiterWindow, Spin: c.Spin, Closed: c.Closed, Leave: leave}
}

// join joins Presence when the Client listens on it already, as Do joins
// Channel; nil when it does not, or when there is no Presence.
func (w Wait) join() core.Subscription {
	if w.Presence == "" {
		return nil
	}
	return w.Notifier.Join(w.Presence, "")
}

// spins reports whether the waiter polls instead of subscribing, with
// ctx's spin (distsync.WithSpin) in place of w.Spin, as Do decides.
func (w Wait) spins(ctx context.Context) bool {
	if s, ok := core.SpinOf(ctx); ok {
		return s.Max > 0
	}
	return w.Spin.Max > 0
}

// Stats counts why waiters woke, for tests and benchmarks.
type Stats struct {
	Attempts atomic.Int64 // attempts made
	Notified atomic.Int64 // wake-ups by notification that led to an attempt
	Handed   atomic.Int64 // grants taken from a notification, without an attempt
	Nudged   atomic.Int64 // sleeps bounded by a nudge (next in line)
	Timer    atomic.Int64 // wake-ups by the retry timer
}

var stats Stats

// Counters returns the process-wide counters.
func Counters() *Stats { return &stats }

// Do runs the loop until try acquires (nil), the budget is spent (an error
// wrapping core.ErrNotAcquired) or ctx is done (ctx.Err()).
//
// A transient failure (the connection dropped, the server restarts or fails
// over: core.Transient) does not end the wait: the attempt is repeated,
// backing off, while the budget lasts. Attempts must therefore be safe to
// repeat: an attempt that was applied but whose reply was lost must, when
// repeated, report the grant it made instead of granting twice. With a zero
// budget a failure is returned at once.
func Do(ctx context.Context, w Wait, try Attempt) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	spin, spun := core.SpinOf(ctx) // a call's own (distsync.WithSpin)
	if spun && spin.Err != nil {
		return spin.Err
	}
	start := time.Now()
	if w.Track != nil {
		w.Track.start = start
	}
	var (
		deadline   time.Time
		sctx       = ctx
		sctxEnd    context.CancelFunc // cancels sctx, when it is ctx's own
		sub        core.Subscription
		here       core.Subscription // on w.Presence, while sub is up
		waiter     string            // "" until subscribed: a refused attempt registers no waiter
		timer      *time.Timer       // made at the first sleep: most acquisitions never sleep
		registered bool
		spins      int
		backoff    core.Backoff
		lastErr    error
	)
	if w.Budget > 0 {
		deadline = start.Add(w.Budget)
		sctx, sctxEnd = context.WithDeadline(ctx, deadline)
	}
	// One deferred call (a function with more would have its defers run
	// by the runtime rather than inline, on every acquisition).
	defer func() {
		if timer != nil {
			timer.Stop()
		}
		if sub != nil {
			sub.Close()
		}
		if here != nil {
			here.Close()
		}
		if sctxEnd != nil {
			sctxEnd()
		}
	}()
	leave := func() {
		if registered && w.leaves() {
			core.RetryDetached(ctx, core.ReleaseTimeout, w.leave)
		}
	}
	if w.Budget != 0 && spun {
		w.Spin = spin
	}
	if w.Budget != 0 && w.Spin.Max <= 0 {
		// On a channel this Client already listens to (others wait), join
		// before the first attempt: it registers the waiter, and no release
		// after it can be missed, so no second attempt is needed.
		if s := w.Notifier.Join(w.Channel, w.Waiter); s != nil {
			if here = w.join(); here != nil || w.Presence == "" {
				sub, waiter = s, w.Waiter
			} else {
				s.Close()
			}
		}
	}
	for now := start; ; now = time.Now() {
		// One attempt, on a context that ends with ctx or after
		// core.ReleaseTimeout, whichever is first.
		stats.Attempts.Add(1)
		if w.Listening != nil {
			*w.Listening = sub != nil
		}
		actx, cancel := core.WithinAt(ctx, now, core.ReleaseTimeout)
		ok, retry, err := try(actx, waiter)
		cancel()
		if !ok && err == nil && w.Track != nil {
			w.Track.contended = true
		}
		if waiter != "" {
			registered = true
		}
		var sleep time.Duration
		switch {
		case err != nil:
			// A cancellation while ctx lives is not ours: the connection was
			// being made for a request whose context ended (rueidis makes one
			// for the requests that wait for it). Try again.
			again := core.Transient(err) || errors.Is(err, context.Canceled)
			if w.Budget == 0 || !again || ctx.Err() != nil {
				leave()
				if cerr := ctx.Err(); cerr != nil {
					return cerr
				}
				return err
			}
			lastErr = err
			sleep = backoff.Next()
		case ok:
			return nil
		case w.Budget == 0:
			return core.ErrNotAcquired
		case w.Spin.Max > 0:
			// Spinning: register with the next attempt, never subscribe.
			lastErr = nil
			if waiter == "" {
				waiter = w.Waiter
				continue
			}
			sleep = w.Spin.Min << min(spins, 30)
			spins++
			sleep = min(sleep, w.Spin.Max)
			if d := retry; d > 0 {
				sleep = min(sleep, d)
			}
		case sub == nil:
			s, err := w.Notifier.Subscribe(sctx, w.Channel, w.Waiter)
			if err == nil && w.Presence != "" {
				if here, err = w.Notifier.Subscribe(sctx, w.Presence, ""); err != nil {
					s.Close()
				}
			}
			switch {
			case err == nil:
				// Try again at once: a release may have come before the
				// subscription.
				sub, waiter = s, w.Waiter
				backoff.Reset()
				continue
			case ctx.Err() != nil:
				return ctx.Err()
			case sctx.Err() != nil:
				return notAcquired(w.Budget, lastErr)
			case !core.Transient(err):
				return err
			}
			lastErr = err
			sleep = backoff.Next()
		default:
			backoff.Reset()
			lastErr = nil
			sleep = retry
			if sleep <= 0 {
				sleep = w.Window / 2
			}
		}
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left <= 0 {
				leave()
				return notAcquired(w.Budget, lastErr)
			}
			sleep = min(sleep, left)
		}
		if timer == nil {
			timer = time.NewTimer(time.Hour)
		}
		if err := sleepFor(ctx, w, sub, here, timer, sleep); err != nil {
			if errors.Is(err, errHanded) {
				return nil
			}
			if errors.Is(err, core.ErrClosed) {
				// The Client is closing: one bounded attempt to leave (and
				// give back what a release handed this waiter) before its
				// connection closes, so that the queue does not wait for
				// this waiter's window. When the rueidis client under it
				// was closed instead, nothing more is sent: a release
				// passes over this waiter, whose subscription is gone.
				if registered && w.leaves() && (w.Closed == nil || w.Closed() != nil) {
					lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), core.CloseGiveBack)
					w.leave(lctx)
					cancel()
				}
			} else {
				leave()
			}
			return err
		}
	}
}

// errHanded ends a sleep whose waiter was handed the lock.
var errHanded = errors.New("handed")

// sleepFor sleeps until a notification worth an attempt, sleep has passed,
// ctx is done (its error) or the notifier closed (core.ErrClosed). A grant
// the waiter takes (w.Handed) ends it with errHanded; a nudge bounds the
// rest of the sleep by w.Bound; a signal that says nothing (Take took its
// news already) is ignored.
func sleepFor(ctx context.Context, w Wait, sub, here core.Subscription, timer *time.Timer, sleep time.Duration) error {
	if !timer.Stop() {
		select {
		case <-timer.C:
		default:
		}
	}
	timer.Reset(sleep)
	end := time.Now().Add(sleep)
	var notified, closed, rejoined <-chan struct{}
	if sub != nil {
		notified, closed = sub.C(), sub.Done()
	}
	if here != nil {
		rejoined = here.C()
	}
	for {
		select {
		case <-notified:
			grant, woken, nudged := sub.Take()
			if grant == "" && !woken && !nudged {
				// A signal whose news an earlier Take took with another
				// one's (two nudges, as second and third in line, one
				// received before the other came): nothing to try for.
				continue
			}
			if grant != "" && w.handed(grant) {
				stats.Handed.Add(1)
				return errHanded
			}
			if grant == "" && !woken && nudged && w.Bound > 0 {
				stats.Nudged.Add(1)
				if b := time.Now().Add(w.Bound); b.Before(end) {
					end = b
					if !timer.Stop() {
						select {
						case <-timer.C:
						default:
						}
					}
					timer.Reset(w.Bound)
				}
				continue
			}
			stats.Notified.Add(1)
		case <-rejoined:
			// Nothing is published on Presence: its subscription came back
			// after a reconnect, and a release may have passed over this
			// waiter meanwhile, when its Client seemed dead. Try again,
			// which registers it anew if so.
			here.Take()
			stats.Notified.Add(1)
		case <-timer.C:
			stats.Timer.Add(1)
		case <-ctx.Done():
			return ctx.Err()
		case <-closed:
			return core.ErrClosed
		}
		return nil
	}
}

// notAcquired is the error of a wait whose budget was spent; lastErr, when
// not nil, is the failure that kept the last attempts from getting an answer.
func notAcquired(budget time.Duration, lastErr error) error {
	if lastErr != nil {
		return fmt.Errorf("%w (waited %v; last attempt: %w)", core.ErrNotAcquired, budget, lastErr)
	}
	return fmt.Errorf("%w (waited %v)", core.ErrNotAcquired, budget)
}
