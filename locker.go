package distsync

import (
	"context"
	"time"
)

// Locker is what every lock-like primitive of distsync satisfies (the mutex,
// the fair lock, and the read and write lockers of a read-write lock), and
// what multilock and redlock compose.
type Locker interface {
	// TryLock acquires within wait (0: one try) with lease (0: the watchdog
	// lease, renewed until Unlock). The returned context carries the hold and
	// is cancelled when the lease is lost or the hold released. It returns an
	// error wrapping ErrNotAcquired when the wait budget is spent.
	TryLock(ctx context.Context, wait, lease time.Duration) (context.Context, error)
	// Unlock releases the hold the context (one TryLock returned) carries.
	Unlock(ctx context.Context) error
	// Key is the lock's Redis key: it names the lock uniquely on its server
	// and orders lockers globally.
	Key() string
}
