package core

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Bounds on requests without a timer each. Every attempt and release is
// bounded (ReleaseTimeout), and context.WithDeadline makes a runtime timer
// per request, started and stopped around one round trip: at 64 goroutines
// that was a tenth of the client's CPU per lock+unlock. A request whose
// context never ends by itself (its Done is nil: context.Background,
// context.WithoutCancel, an owner's context on those) is bounded instead by
// a tick: the deadlines of one boundTick share one channel, closed by one
// timer when the tick comes. One whose context ends by then by its own
// deadline (a request's, with a timeout) runs on that context as it is.

// boundTick is the granularity of shared deadlines: a bound ends up to this
// much before the deadline asked for, never after it.
const boundTick = 50 * time.Millisecond

// tick is the shared end of the bounds whose deadline rounds down to at.
type tick struct {
	at   time.Time
	done chan struct{}
}

var ticks struct {
	last atomic.Pointer[tick] // the latest tick made: most bounds take it
	mu   sync.Mutex
	m    map[int64]*tick // live ticks by their number (at / boundTick)
}

// tickAt returns the live tick of number n (its time n*boundTick), made
// when it is the first bound to end then.
func tickAt(n int64) *tick {
	at := time.Unix(0, n*int64(boundTick))
	if t := ticks.last.Load(); t != nil && t.at.Equal(at) {
		return t
	}
	ticks.mu.Lock()
	defer ticks.mu.Unlock()
	if t := ticks.m[n]; t != nil {
		return t
	}
	if ticks.m == nil {
		ticks.m = map[int64]*tick{}
	}
	t := &tick{at: at, done: make(chan struct{})}
	ticks.m[n] = t
	if l := ticks.last.Load(); l == nil || l.at.Before(at) {
		ticks.last.Store(t)
	}
	time.AfterFunc(time.Until(at), func() {
		ticks.mu.Lock()
		delete(ticks.m, n)
		ticks.mu.Unlock()
		close(t.done)
	})
	return t
}

// boundCtx is a context that never ended by itself, bounded by a tick.
// Detached, it is context.WithoutCancel of its Context so bounded, in one
// allocation (a release's, made on behalf of a context that may have ended).
type boundCtx struct {
	context.Context
	t        *tick
	detached bool
}

func (b *boundCtx) Value(key any) any {
	if b.detached {
		return context.WithoutCancel(b.Context).Value(key) // no allocation
	}
	return b.Context.Value(key)
}

func (b *boundCtx) Deadline() (time.Time, bool) { return b.t.at, true }
func (b *boundCtx) Done() <-chan struct{}       { return b.t.done }

func (b *boundCtx) Err() error {
	select {
	case <-b.t.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

func (b *boundCtx) String() string { return "distsync bound until " + b.t.at.String() }

// Until returns ctx bounded by deadline, as context.WithDeadline does, but
// for a ctx that never ends by itself (Done nil) without a timer of its
// own: the bound then ends at deadline rounded down to a boundTick (at most
// boundTick early); for a ctx whose own deadline comes first, it is ctx.
// Call the CancelFunc when done, as with WithDeadline.
func Until(ctx context.Context, deadline time.Time) (context.Context, context.CancelFunc) {
	if ctx.Done() != nil {
		return ending(ctx, deadline)
	}
	return until(ctx, time.Now(), deadline)
}

// Within is Until d from now.
func Within(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return WithinAt(ctx, time.Now(), d)
}

// WithinAt is Within, now being the caller's reading of the clock (which
// spares one).
func WithinAt(ctx context.Context, now time.Time, d time.Duration) (context.Context, context.CancelFunc) {
	if ctx.Done() != nil {
		return ending(ctx, now.Add(d))
	}
	return until(ctx, now, now.Add(d))
}

// ending is Until on a ctx that ends by itself (Done not nil): ctx itself
// when its own deadline comes by deadline (a request's context with a
// timeout, mostly: the bound then costs no context, registration on ctx nor
// timer), else context.WithDeadline.
func ending(ctx context.Context, deadline time.Time) (context.Context, context.CancelFunc) {
	if dl, ok := ctx.Deadline(); ok && !dl.After(deadline) {
		return ctx, noCancel
	}
	return context.WithDeadline(ctx, deadline)
}

// until is Until on a ctx whose Done is nil, at now.
func until(ctx context.Context, now, deadline time.Time) (context.Context, context.CancelFunc) {
	return bound(ctx, false, now, deadline)
}

// UntilDetached is Until(context.WithoutCancel(ctx), deadline), mostly in
// one allocation.
func UntilDetached(ctx context.Context, deadline time.Time) (context.Context, context.CancelFunc) {
	return bound(ctx, true, time.Now(), deadline)
}

// bound is until, of context.WithoutCancel(ctx) when detached.
func bound(ctx context.Context, detached bool, now, deadline time.Time) (context.Context, context.CancelFunc) {
	n := deadline.UnixNano() / int64(boundTick)
	if n*int64(boundTick)-now.UnixNano() < int64(boundTick) {
		if detached {
			ctx = context.WithoutCancel(ctx)
		}
		return context.WithDeadline(ctx, deadline)
	}
	return &boundCtx{Context: ctx, t: tickAt(n), detached: detached}, noCancel
}

func noCancel() {}
