package semaphore

import "time"

// Tune sets the hand-off lease of s's Client (core.Config.HandoffLease):
// call it before the Client's first call, or between calls.
func Tune(s *PermitSemaphore, handoffLease time.Duration) {
	s.c.HandoffLease = handoffLease
}
