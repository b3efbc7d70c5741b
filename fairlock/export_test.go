package fairlock

import "context"

// Leave runs what a waiter that gives up runs, for waiter id (whose
// acquisition, when the id names one, is given back if a release granted it).
func (f *FairLock) Leave(ctx context.Context, waiter string) error {
	return f.leave(ctx, waiter, waiter)
}
