package semaphore

import "context"

// The calls both semaphores share, on the pool of permits. Each works on a
// nil or zero handle too, returning an error wrapping ErrInvalidArgument
// (distsync.ErrInvalidArgument) instead of panicking.

// p returns the Semaphore's pool, or an empty one when no Client made s.
func (s *Semaphore) p() *pool {
	if s == nil {
		return &pool{kind: "semaphore"}
	}
	return &s.pool
}

// p returns the PermitSemaphore's pool, or an empty one when no Client
// made s.
func (s *PermitSemaphore) p() *pool {
	if s == nil {
		return &pool{kind: "permit semaphore"}
	}
	return &s.pool
}

// Name returns the semaphore's name.
func (s *Semaphore) Name() string { return s.p().nameOf() }

// Key returns the Redis key of the semaphore's state (its kind and available
// permits); every key of the semaphore shares its hash tag.
func (s *Semaphore) Key() string { return s.p().key() }

// TrySetPermits sets the semaphore's number of permits to n (0..MaxPermits)
// if it was never set, and reports whether it did. Waiters that can now
// proceed are woken. One round trip.
func (s *Semaphore) TrySetPermits(ctx context.Context, n int64) (bool, error) {
	return s.p().trySetPermits(ctx, n)
}

// AddPermits adds n permits, or removes -n when n is negative: available may
// then become negative, and acquisitions wait until releases bring it above
// zero again. It sets the permits when they were never set. Adding wakes the
// waiters that can now proceed. It returns ErrInvalidArgument when |n| or the
// resulting count exceeds MaxPermits. One round trip.
func (s *Semaphore) AddPermits(ctx context.Context, n int64) error { return s.p().addPermits(ctx, n) }

// SetPermits sets the semaphore's number of permits to n (0..MaxPermits)
// whether or not it was set (Redisson's setPermits): available becomes n
// minus the permits held (for a PermitSemaphore; a counting semaphore's
// permits are not held by anyone, so available becomes n). Available is
// negative while more than n are held, and climbs back as they are released.
// Waiters that can now proceed are woken. One round trip.
func (s *Semaphore) SetPermits(ctx context.Context, n int64) error { return s.p().setPermits(ctx, n) }

// Available returns the number of permits available now (negative after
// permits were removed below those held or taken; 0 when never set). One
// round trip.
func (s *Semaphore) Available(ctx context.Context) (int64, error) { return s.p().available(ctx) }

// Drain takes every available permit and returns how many it took (0 when
// none was available; a negative count is left unchanged). It wakes no one.
// One round trip.
func (s *Semaphore) Drain(ctx context.Context) (int64, error) { return s.p().drain(ctx) }

// Delete removes the semaphore, its kind included, and reports whether it
// existed. Afterwards its permits count as never set, and the name may be
// used by any kind; holders of a PermitSemaphore's permits lose them (their
// contexts are cancelled with ErrLeaseLost at the next renewal). Waiters
// keep waiting. A name of another kind is left as it is (ErrWrongKind). One
// round trip.
func (s *Semaphore) Delete(ctx context.Context) (bool, error) { return s.p().remove(ctx) }

// Name is Semaphore.Name on this semaphore.
func (s *PermitSemaphore) Name() string { return s.p().nameOf() }

// Key is Semaphore.Key on this semaphore.
func (s *PermitSemaphore) Key() string { return s.p().key() }

// TrySetPermits is Semaphore.TrySetPermits on this semaphore.
func (s *PermitSemaphore) TrySetPermits(ctx context.Context, n int64) (bool, error) {
	return s.p().trySetPermits(ctx, n)
}

// AddPermits is Semaphore.AddPermits on this semaphore.
func (s *PermitSemaphore) AddPermits(ctx context.Context, n int64) error {
	return s.p().addPermits(ctx, n)
}

// SetPermits is Semaphore.SetPermits on this semaphore.
func (s *PermitSemaphore) SetPermits(ctx context.Context, n int64) error {
	return s.p().setPermits(ctx, n)
}

// Available is Semaphore.Available on this semaphore.
func (s *PermitSemaphore) Available(ctx context.Context) (int64, error) { return s.p().available(ctx) }

// Drain is Semaphore.Drain on this semaphore.
func (s *PermitSemaphore) Drain(ctx context.Context) (int64, error) { return s.p().drain(ctx) }

// Delete is Semaphore.Delete on this semaphore.
func (s *PermitSemaphore) Delete(ctx context.Context) (bool, error) { return s.p().remove(ctx) }
