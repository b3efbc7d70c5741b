package core

import (
	"context"
	"errors"
	"testing"
	"time"
)

// ended waits for ctx to end, failing the test when it has not within
// limit (a generous bound: a loaded machine runs timers late).
func ended(t *testing.T, ctx context.Context, limit time.Duration) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(limit):
		t.Fatalf("the bound did not end within %v", limit)
	}
}

// A bound on a context that never ends by itself shares a tick: its
// deadline is the one asked for rounded down to the tick, it ends then
// with DeadlineExceeded, and bounds that round to the same tick share it.
func TestUntilSharesATick(t *testing.T) {
	want := time.Now().Add(5 * boundTick)
	ctx, cancel := Until(context.WithoutCancel(context.Background()), want)
	defer cancel()
	if _, ok := ctx.(*boundCtx); !ok {
		t.Fatalf("Until on a context without Done made a %T, want a shared tick", ctx)
	}
	d, ok := ctx.Deadline()
	if !ok || d.After(want) || !d.After(want.Add(-boundTick)) {
		t.Fatalf("Deadline = %v, %v; want within a tick before %v", d, ok, want)
	}
	other, cancel2 := Until(context.Background(), d)
	defer cancel2()
	if other.Done() != ctx.Done() {
		t.Fatal("two bounds ending at the same tick have two channels")
	}
	if err := ctx.Err(); err != nil {
		t.Fatalf("Err before the deadline = %v", err)
	}
	ended(t, ctx, time.Minute)
	if time.Now().Before(d) {
		t.Fatalf("ended at %v, before its deadline %v", time.Now(), d)
	}
	if err := ctx.Err(); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Err = %v, want DeadlineExceeded", err)
	}
	if err := context.Cause(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Cause = %v, want DeadlineExceeded", err)
	}
}

// A bound on a context that can end, or one shorter than a tick, is
// context.WithDeadline's: the parent's end and the exact deadline end it.
func TestUntilFallsBackToWithDeadline(t *testing.T) {
	parent, stop := context.WithCancel(context.Background())
	ctx, cancel := Within(parent, time.Hour)
	defer cancel()
	if _, ok := ctx.(*boundCtx); ok {
		t.Fatal("a bound on a cancelable context shares a tick: its parent's end would not end it")
	}
	stop()
	ended(t, ctx, time.Minute)
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("Err = %v, want Canceled", ctx.Err())
	}
	short, cancel2 := Within(context.Background(), boundTick/5)
	defer cancel2()
	if _, ok := short.(*boundCtx); ok {
		t.Fatal("a bound shorter than a tick shares a tick: it could end at once")
	}
	ended(t, short, time.Minute)
}

// A bound no earlier than the context's own deadline is the context itself:
// no context, registration on it nor timer of its own (a request's context
// with a timeout, bounded by ReleaseTimeout), and it ends with it. A later
// deadline of the context, or none, gets a bound of its own.
func TestBoundAfterTheContextsDeadlineIsTheContext(t *testing.T) {
	parent, stop := context.WithTimeout(context.Background(), time.Minute)
	defer stop()
	dl, _ := parent.Deadline()
	for _, d := range []time.Duration{time.Minute, time.Hour} {
		ctx, cancel := Within(parent, d)
		if ctx != parent {
			t.Fatalf("Within(%v) of a context ending within a minute: a context of its own, want the context itself", d)
		}
		cancel() // harmless: the context goes on
		if parent.Err() != nil {
			t.Fatal("the bound's cancel ended the context it was made from")
		}
	}
	if ctx, cancel := Until(parent, dl); ctx != parent {
		t.Fatal("Until the context's own deadline: a context of its own, want the context itself")
	} else {
		cancel()
	}
	ctx, cancel := Within(parent, time.Second)
	defer cancel()
	if ctx == parent {
		t.Fatal("a bound before the context's deadline is the context itself: it would not end by then")
	}
	if got, _ := ctx.Deadline(); !got.Before(dl) {
		t.Fatalf("deadline %v, want before the context's %v", got, dl)
	}
	noDeadline, stop2 := context.WithCancel(context.Background())
	defer stop2()
	other, cancel3 := Within(noDeadline, time.Hour)
	defer cancel3()
	if other == noDeadline {
		t.Fatal("a bound on a context without a deadline is the context itself: it would never end by itself")
	}
	stop()
	ended(t, parent, time.Minute)
}

// A detached bound is context.WithoutCancel's, bounded: the values of the
// context it was made from, neither its end nor its cause, and the tick's
// deadline. It is what releases run on, asked with a context that ended.
func TestUntilDetachedIsWithoutCancel(t *testing.T) {
	type key struct{}
	cause := errors.New("the holder's context ended")
	parent, end := context.WithCancelCause(context.WithValue(context.Background(), key{}, "owner"))
	end(cause)
	for _, d := range []time.Duration{5 * boundTick, boundTick / 2} { // a shared tick, a timer of its own
		ctx, cancel := UntilDetached(parent, time.Now().Add(d))
		if ctx.Err() != nil || context.Cause(ctx) != nil {
			t.Fatalf("bound of %v: Err %v, Cause %v; want neither from the ended parent", d, ctx.Err(), context.Cause(ctx))
		}
		if v, _ := ctx.Value(key{}).(string); v != "owner" {
			t.Fatalf("bound of %v: Value = %q, want the parent's", d, v)
		}
		if dl, ok := ctx.Deadline(); !ok || dl.After(time.Now().Add(d)) {
			t.Fatalf("bound of %v: Deadline = %v, %v", d, dl, ok)
		}
		ended(t, ctx, time.Minute)
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) || !errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
			t.Fatalf("bound of %v ended with %v, cause %v; want its deadline", d, ctx.Err(), context.Cause(ctx))
		}
		cancel()
	}
}
