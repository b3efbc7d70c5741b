package fairlock

import "context"

// Leave runs what a waiter that gives up runs, for waiter id.
func (f *FairLock) Leave(ctx context.Context, waiter string) error { return f.leave(ctx, waiter) }
