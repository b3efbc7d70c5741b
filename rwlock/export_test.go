package rwlock

import "time"

// Tune sets the hand-off lease of rw's Client (core.Config.HandoffLease):
// call it before the Client's first call, or between calls.
func Tune(rw *RWLock, handoffLease time.Duration) { rw.c.HandoffLease = handoffLease }
