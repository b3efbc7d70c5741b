package acquire

import (
	"context"
	"time"

	"github.com/distsync/distsync/internal/core"
)

// Track follows the attempts of one acquisition, whose id they all carry,
// for what they may have granted: every primitive that grants through Do
// records its attempts here and ends with Finish.
type Track struct {
	sentAt  time.Time // the granting attempt's send
	unsure  time.Time // the first attempt whose outcome is unknown
	granted bool
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
// send of the first attempt whose outcome was unknown (it may be the one
// that granted), else of the granting one.
func (t *Track) SentAt() time.Time {
	if !t.unsure.IsZero() {
		return t.unsure
	}
	return t.sentAt
}

// Unknown reports whether some attempt's outcome was unknown: one may
// still be on the wire.
func (t *Track) Unknown() bool { return !t.unsure.IsZero() }
