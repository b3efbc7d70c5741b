package acquire

import (
	"context"
	"errors"
	"time"

	"github.com/distsync/distsync/internal/core"
	"github.com/distsync/distsync/observe"
)

// Track follows the attempts of one acquisition, whose id they all carry,
// for what they may have granted: every primitive that grants through Do
// records its attempts here and ends with Finish.
type Track struct {
	// Kind, Side and Name are what Report tells the observer (Kind "":
	// nothing).
	Kind       observe.Kind
	Side, Name string

	start     time.Time // when Do started waiting (Wait.Track)
	contended bool      // an attempt was refused
	takeOver  bool      // a grant replaced another owner's hold (ForceLock)
	sentAt    time.Time // the granting attempt's send
	unsure    time.Time // the first attempt whose outcome is unknown
	granted   bool
}

// Sent records the reply (or failure) of an attempt sent at sent. It
// returns err, wrapped in core.ErrClosed when the Client's connection was
// closed under it.
func (t *Track) Sent(sent time.Time, granted bool, err error) error {
	if err != nil {
		if core.Unknown(err) && t.unsure.IsZero() {
			t.unsure = sent
		}
		return core.ClosedErr(err)
	}
	if granted {
		t.granted, t.sentAt = true, sent
	}
	return nil
}

// Finish ends the wait of Do, which returned err: nil when granted and ctx
// is still live. Otherwise, when some attempt may have granted, undo runs
// (core.Undo: it gives the grant back in the background), and the error
// is returned (ctx.Err() when the grant came after ctx ended).
func (t *Track) Finish(ctx context.Context, err error, undo func()) error {
	if err == nil {
		err = ctx.Err()
	}
	if err != nil && (t.granted || !t.unsure.IsZero()) {
		undo()
	}
	return err
}

// SentAt is a lower bound for the server's start of the granted lease: the
// granting attempt's send (for a grant a release handed over, the bound the
// waiter computed). An earlier attempt whose reply was lost may have been
// the one that granted, but every primitive's attempt script renews the
// lease of a repeated attempt from its own run, as a new grant's, so the
// lease ends no earlier than the granting attempt's send plus the lease.
// (Counting from the first unknown attempt instead refused, as late, every
// grant that came more than a lease after a connection was lost, such as a
// waiter's after a server restart.)
func (t *Track) SentAt() time.Time { return t.sentAt }

// Unknown reports whether some attempt's outcome was unknown: one may
// still be on the wire.
func (t *Track) Unknown() bool { return !t.unsure.IsZero() }

// Report tells c's observer, if any, how the acquisition ended: granted with
// token when err is nil. Call it once, with no lock held.
func (t *Track) Report(ctx context.Context, c *core.Core, token int64, err error) {
	o := c.Observer
	if o == nil || t.Kind == "" {
		return
	}
	if err != nil {
		token = 0
	}
	now := time.Now()
	if t.start.IsZero() { // Do returned before it started
		t.start = now
	}
	o.Acquired(ctx, observe.AcquireInfo{
		Kind: t.Kind, Side: t.Side, Name: t.Name, Start: t.start, Wait: now.Sub(t.start),
		Contended: t.contended || t.takeOver, TakeOver: t.takeOver, Token: token, Err: err,
	})
}

// AgainIfLate runs one acquisition with wait (< 0: until ctx is done) and,
// when its grant was refused as late (core.LateGrant: the reply came after
// the lease could have ended; the run gave it back), runs a new one with
// what is left of wait, until one is granted, fails otherwise, the wait is
// spent, or lateAgain new ones were late too: then the lease is too short
// for the round trips of this connection, and waiting longer would not
// help. A late hand-off (LateGrant.Handed) is not counted: its lease was
// the release's short hand-off lease, not the acquisition's, so a process
// too busy to take one in time is no reason to end an unbounded wait. Each
// run is a new acquisition, with an id of its own: the late one is finished
// on the server.
func AgainIfLate[T any](ctx context.Context, wait time.Duration, run func(wait time.Duration) (T, error)) (T, error) {
	l := newLate(wait)
	for {
		v, err := run(l.left)
		if !l.again(ctx, err) {
			return v, err
		}
	}
}

// late is AgainIfLate's count, for a loop that runs the acquisitions
// itself: run one with left, and another while again says so.
type late struct {
	start      time.Time
	wait, left time.Duration
	n          int // new acquisitions run after late grants
}

func newLate(wait time.Duration) late {
	l := late{wait: wait, left: wait}
	if wait > 0 { // only a bounded wait counts what is left of it
		l.start = time.Now()
	}
	return l
}

// again reports whether, after an acquisition that ended with err, a new
// one is to run (with left).
func (l *late) again(ctx context.Context, err error) bool {
	late, ok := lateOf(err)
	if !ok || ctx.Err() != nil || l.wait == 0 || l.n == lateAgain && !late.Handed {
		return false
	}
	if !late.Handed {
		l.n++
	}
	if l.wait > 0 {
		if l.left = l.wait - time.Since(l.start); l.left <= 0 {
			return false
		}
	}
	return true
}

// lateOf returns the core.LateGrant err wraps, if any (its target is
// allocated only on this path, not on every grant).
func lateOf(err error) (core.LateGrant, bool) {
	var late core.LateGrant
	if err == nil || !errors.As(err, &late) {
		return core.LateGrant{}, false
	}
	return late, true
}

// lateAgain is how many new acquisitions AgainIfLate tries after a late
// grant.
const lateAgain = 3
