package distsync

import (
	"context"
	"time"

	"github.com/distsync/distsync/internal/core"
)

// Locker is what every lock-like primitive of distsync satisfies (the mutex,
// the fair lock, and the read and write lockers of a read-write lock), and
// what multilock and redlock compose.
type Locker interface {
	// TryLock acquires within wait (0: one try) with lease (0: the watchdog
	// lease, renewed until Unlock). The returned context carries the hold and
	// is cancelled when the lease is lost or the hold released. A hold and
	// its context end together: when ctx ends, the hold is released; when ctx
	// ends before the grant comes back, TryLock returns ctx.Err() and leaves
	// nothing held. It returns an error wrapping ErrNotAcquired when the wait
	// budget is spent.
	TryLock(ctx context.Context, wait, lease time.Duration) (context.Context, error)
	// Unlock releases the hold the context (one TryLock returned) carries.
	Unlock(ctx context.Context) error
	// Key is the lock's Redis key: it names the lock uniquely on its server
	// and orders lockers globally.
	Key() string
}

// Forever, as the wait of TryLock or TryAcquire, waits until the context is
// done: TryLock(ctx, distsync.Forever, lease) is a blocking lock with an
// explicit lease (Redisson's lock(leaseTime)).
const Forever time.Duration = core.Forever

// NewOwner returns a context that carries a new owner, with the values and
// the cancellation of ctx. Goroutines given a hold's context (an errgroup, a
// request context passed down) share the hold's owner: locking with it
// re-enters, so they do not exclude one another. Give each goroutine that
// must contend an owner of its own with NewOwner: locks taken with it are
// new holds, and Unlock with it does not release the holds ctx carries.
func NewOwner(ctx context.Context) context.Context { return core.NewOwner(ctx) }
