package acquire

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/distsync/distsync/internal/core"
)

// A wait runs new acquisitions after late grants, at most lateAgain of
// them when the acquisition's own lease was too short, but without a
// count when each was a release's hand-off (whose lease is the short
// hand-off lease): an unbounded wait is not ended by a process too busy to
// take hand-offs in time.
func TestLateHandOffsDoNotEndTheWait(t *testing.T) {
	ctx := context.Background()
	late := func(handed bool) error {
		return fmt.Errorf("%w: %w", core.ErrNotAcquired, core.LateGrant{After: time.Second, Lease: time.Second, Handed: handed})
	}
	l := newLate(-1)
	for i := range lateAgain {
		if !l.again(ctx, late(false)) {
			t.Fatalf("late grant %d: the wait ended before %d new acquisitions", i+1, lateAgain)
		}
	}
	if l.again(ctx, late(false)) {
		t.Fatalf("a late grant after %d: the wait goes on, though the lease is too short for the connection", lateAgain)
	}
	for i := range 10 * lateAgain {
		if !l.again(ctx, late(true)) {
			t.Fatalf("late hand-off %d after %d late grants: the wait ended", i+1, lateAgain)
		}
	}
	if l.again(ctx, fmt.Errorf("%w: refused", core.ErrNotAcquired)) {
		t.Fatal("an error that is no late grant: a new acquisition")
	}
	if b := newLate(0); b.again(ctx, late(true)) {
		t.Fatal("no wait: no new acquisition")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if b := newLate(-1); b.again(cctx, late(true)) {
		t.Fatal("ctx ended: no new acquisition")
	}
}
