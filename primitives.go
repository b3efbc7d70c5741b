package distsync

import (
	"fmt"

	"github.com/distsync/distsync/election"
	"github.com/distsync/distsync/fairlock"
	"github.com/distsync/distsync/internal/core"
	"github.com/distsync/distsync/latch"
	"github.com/distsync/distsync/mutex"
	"github.com/distsync/distsync/rwlock"
	"github.com/distsync/distsync/semaphore"
)

// Mutex returns the reentrant mutex called name. It makes no I/O; an invalid
// name returns ErrInvalidName, and a Client that was closed ErrClosed.
func (c *Client) Mutex(name string) (*mutex.Mutex, error) {
	return core.Make[*mutex.Mutex](c.cc(), KindMutex, name)
}

// RWLock returns the reentrant read-write lock called name; its Read and
// Write methods return the two lockers. Options such as rwlock.PreferWriters
// configure the handle. It makes no I/O; an invalid name returns
// ErrInvalidName, and a Client that was closed ErrClosed.
func (c *Client) RWLock(name string, opts ...rwlock.Option) (*rwlock.RWLock, error) {
	rw, err := core.Make[*rwlock.RWLock](c.cc(), KindRWLock, name)
	if err != nil {
		return nil, err
	}
	for _, o := range opts {
		o(rw)
	}
	return rw, nil
}

// FairLock returns the reentrant fair lock called name, which grants in
// arrival order across processes. It makes no I/O; an invalid name returns
// ErrInvalidName, and a Client that was closed ErrClosed.
func (c *Client) FairLock(name string) (*fairlock.FairLock, error) {
	return core.Make[*fairlock.FairLock](c.cc(), KindFairLock, name)
}

// Semaphore returns the counting semaphore called name (Redisson's
// RSemaphore). It makes no I/O; an invalid name returns ErrInvalidName, and
// a Client that was closed ErrClosed. Its calls on a name another kind uses,
// a PermitSemaphore's included, return ErrWrongKind.
func (c *Client) Semaphore(name string) (*semaphore.Semaphore, error) {
	return core.Make[*semaphore.Semaphore](c.cc(), KindSemaphore, name)
}

// PermitSemaphore returns the permit-expiring semaphore called name
// (Redisson's RPermitExpirableSemaphore), whose permits have ids and leases
// renewed by the Client's watchdog. It makes no I/O; an invalid name returns
// ErrInvalidName, and a Client that was closed ErrClosed. Its calls on a
// name another kind uses, a counting Semaphore's included, return
// ErrWrongKind.
func (c *Client) PermitSemaphore(name string) (*semaphore.PermitSemaphore, error) {
	return core.Make[*semaphore.PermitSemaphore](c.cc(), KindPermitSemaphore, name)
}

// Latch returns the countdown latch called name (Redisson's RCountDownLatch).
// It makes no I/O; an invalid name returns ErrInvalidName, and a Client that
// was closed ErrClosed.
func (c *Client) Latch(name string) (*latch.Latch, error) {
	return core.Make[*latch.Latch](c.cc(), KindLatch, name)
}

// Election returns the leader election called name: candidates Campaign in
// arrival order, one leads at a time, and its term is a fencing token.
// opts give it a lease of its own (election.WithLease) and a liveness
// check (election.WithLiveness). It makes no I/O; an invalid name returns
// ErrInvalidName, an invalid option ErrInvalidArgument, and a Client that
// was closed ErrClosed.
func (c *Client) Election(name string, opts ...election.Option) (*election.Election, error) {
	e, err := core.Make[*election.Election](c.cc(), KindElection, name)
	if err != nil {
		return nil, err
	}
	for _, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("election %q: %w: a nil option", name, ErrInvalidArgument)
		}
		if err := o(e); err != nil {
			return nil, fmt.Errorf("election %q: %w", name, err)
		}
	}
	return e, nil
}
