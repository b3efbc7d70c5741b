// Package core holds what every distsync primitive shares and users must not see:
// the per-Client environment, errors, key naming and name validation, owner identity
// carried in a context, and embedded Lua scripts.
package core

import (
	"errors"
	"fmt"
)

// Sentinel errors. The root package and the primitives re-export them, so
// errors.Is works whichever package a caller names.
var (
	// ErrNotHeld is returned when a caller releases or queries a lock it does not hold.
	ErrNotHeld = errors.New("distsync: not held by this owner")
	// ErrNotAcquired is returned when a try-acquire gives up: the wait budget was spent
	// (or was zero) while another owner held the primitive.
	ErrNotAcquired = errors.New("distsync: not acquired within the wait budget")
	// ErrLeaseLost is the cause of a holder's context when its lease was lost:
	// the key was deleted or taken over, or renewal failed until the lease ran out.
	ErrLeaseLost = errors.New("distsync: lease lost")
	// ErrLeaseExpired is the cause of a holder's context when an explicit lease,
	// which the watchdog does not renew, has run out.
	ErrLeaseExpired = errors.New("distsync: explicit lease expired")
	// ErrReleased is the cause of a holder's context after the acquisition that
	// returned it was released.
	ErrReleased = errors.New("distsync: released")
	// ErrInvalidName is returned for an empty or over-long primitive name,
	// or one that is not UTF-8 or has a brace or a control character.
	ErrInvalidName = errors.New("distsync: invalid name")
	// ErrInvalidArgument is returned for a negative duration, a count out of range
	// and similar misuse.
	ErrInvalidArgument = errors.New("distsync: invalid argument")
	// ErrClosed is returned by every call on a Client that was closed.
	ErrClosed = errors.New("distsync: client closed")
	// ErrNotReplicated is returned when replica acknowledgement is configured
	// and too few replicas acknowledged an acquisition in time; the
	// acquisition was undone.
	ErrNotReplicated = errors.New("distsync: acquisition not acknowledged by enough replicas")
	// ErrWrongKind is returned when a name is used by another kind of
	// primitive (a mutex called like a semaphore, say): names are one
	// namespace across kinds, and every script refuses a foreign kind.
	ErrWrongKind = errors.New("distsync: the name is used by another kind of primitive")
	// ErrNotSet is returned, wrapped with ErrNotAcquired (a spent wait
	// budget) or with the context's error (a wait ended by its context),
	// when a semaphore whose permits are not set (never set, or their TTL
	// ended) could not be acquired: it is not full, it has no permits at
	// all until TrySetPermits, SetPermits or AddPermits; and from a Release
	// to such a semaphore, which releases nothing rather than recreate it.
	ErrNotSet = errors.New("distsync: the semaphore's permits were never set")
	// ErrUpgrade is returned when the holder of a read lock asks for the write lock,
	// which would deadlock.
	ErrUpgrade = errors.New("distsync: read lock holder cannot take the write lock")
	// ErrNoLeader is returned when an election has no leader.
	ErrNoLeader = errors.New("distsync: no leader")
)

// ErrNoClient is the error of a call on a handle no Client made: a nil pointer
// or a zero value (a Client, a primitive, a Permit).
var ErrNoClient = fmt.Errorf("%w: a nil or zero value, not made by a Client", ErrInvalidArgument)

// OrZero returns p, or a new zero T when p is nil: a method of a nil
// handle goes on with a zero one, whose nil Core reports ErrNoClient.
func OrZero[T any](p *T) *T {
	if p == nil {
		return new(T)
	}
	return p
}
