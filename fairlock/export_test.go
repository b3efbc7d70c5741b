package fairlock

import (
	"context"
	"time"
)

// Leave runs what a waiter that gives up runs, for waiter id (whose
// acquisition, when the id names one, is given back if a release granted it).
func (f *FairLock) Leave(ctx context.Context, waiter string) error {
	return f.leave(ctx, waiter, waiter)
}

// Tune sets the hand-off lease of f's Client (core.Config.HandoffLease) and
// of f's lockers: call it before the Client's first call, or between calls.
func Tune(f *FairLock, handoffLease time.Duration) {
	f.c.HandoffLease = handoffLease
	f.h = f.describe()
}
