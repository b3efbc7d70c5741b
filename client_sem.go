package distsync

import (
	"github.com/distsync/distsync/internal/core"
	"github.com/distsync/distsync/latch"
	"github.com/distsync/distsync/semaphore"
)

// Semaphore returns the counting semaphore called name (Redisson's
// RSemaphore). It makes no I/O; an invalid name returns ErrInvalidName, and
// a Client that was closed ErrClosed. Its calls on a name another kind uses,
// a PermitSemaphore's included, return ErrWrongKind.
func (c *Client) Semaphore(name string) (*semaphore.Semaphore, error) {
	return core.Make[*semaphore.Semaphore](c.cc(), "semaphore", name)
}

// PermitSemaphore returns the permit-expiring semaphore called name
// (Redisson's RPermitExpirableSemaphore), whose permits have ids and leases
// renewed by the Client's watchdog. It makes no I/O; an invalid name returns
// ErrInvalidName, and a Client that was closed ErrClosed. Its calls on a
// name another kind uses, a counting Semaphore's included, return
// ErrWrongKind.
func (c *Client) PermitSemaphore(name string) (*semaphore.PermitSemaphore, error) {
	return core.Make[*semaphore.PermitSemaphore](c.cc(), "permit semaphore", name)
}

// Latch returns the countdown latch called name (Redisson's RCountDownLatch).
// It makes no I/O; an invalid name returns ErrInvalidName, and a Client that
// was closed ErrClosed.
func (c *Client) Latch(name string) (*latch.Latch, error) {
	return core.Make[*latch.Latch](c.cc(), "latch", name)
}
