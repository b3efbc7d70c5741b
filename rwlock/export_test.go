package rwlock

import "time"

// Tune sets the hand-off lease of rw's Client (core.Config.HandoffLease) and
// of rw's lockers: call it before the Client's first call, or between calls.
func Tune(rw *RWLock, handoffLease time.Duration) {
	rw.c.HandoffLease = handoffLease
	rw.read.h, rw.write.h = rw.read.describe(), rw.write.describe()
}
