package election

import (
	"context"
	"time"
)

// Tune sets the hand-off lease of e's Client (core.Config.HandoffLease): call
// it before the Client's first call, or between calls.
func Tune(e *Election, handoffLease time.Duration) { e.c.HandoffLease = handoffLease }

// Leave runs what a candidate that gives up runs, for candidate id (whose
// leadership, when the id names a campaign granted it, is given back).
func Leave(ctx context.Context, e *Election, id string) error {
	return (&candidate{e: e}).Leave(ctx, id, "")
}
