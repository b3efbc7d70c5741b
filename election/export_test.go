package election

import "time"

// Tune sets the hand-off lease of e's Client (core.Config.HandoffLease): call
// it before the Client's first call, or between calls.
func Tune(e *Election, handoffLease time.Duration) { e.c.HandoffLease = handoffLease }
