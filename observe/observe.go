// Package observe names what a Client's Observer is told: the kinds of
// primitive and what each hook receives. Package distsync declares each name
// again as an alias (distsync.AcquireInfo is observe.AcquireInfo), as os
// does with io/fs; the library's own packages import this one, which imports
// nothing of distsync.
package observe

import "time"

// Kind is a kind of primitive: the one set of names that distsync.Info.Kind,
// AcquireInfo, ReleaseInfo and LostInfo, the otel adapter's distsync.kind
// attribute and the command use. Each is also the marker the primitive
// stores with its state, so a name never holds two kinds at once.
type Kind string

// The kinds of primitive.
const (
	KindMutex           Kind = "mutex"
	KindRWLock          Kind = "rwlock"
	KindFairLock        Kind = "fairlock"
	KindSemaphore       Kind = "semaphore"       // the counting semaphore
	KindPermitSemaphore Kind = "permitsemaphore" // the permit-expiring semaphore
	KindLatch           Kind = "latch"
	KindElection        Kind = "election" // a leadership is an acquisition
)

// The sides of a read-write lock, as AcquireInfo, ReleaseInfo, LostInfo
// (Side) and distsync.Info (Mode, Owner.Mode, Waiter.Mode) name them.
const (
	SideRead  = "read"
	SideWrite = "write"
)

// AcquireInfo describes one acquisition attempt, granted or not.
type AcquireInfo struct {
	// Kind is the primitive's kind, a Kind constant (never KindLatch: a
	// latch has no acquisitions); Side is a read-write lock's side,
	// SideRead or SideWrite, and "" for other kinds; Name is the
	// primitive's name.
	Kind Kind
	Side string
	Name string
	// Start is when the call began to try; Wait is how long it took until
	// it was granted or gave up.
	Start time.Time
	Wait  time.Duration
	// Contended reports whether the call found the primitive held (or, for
	// a semaphore, with too few permits): an attempt was refused, so the
	// caller waited or, with no wait budget, was turned away; or ForceLock
	// took the lock over (TakeOver).
	Contended bool
	// TakeOver reports a Mutex.ForceLock that replaced another owner's
	// hold (not one that found the lock free, nor a re-entry).
	TakeOver bool
	// Token is the fencing token of a granted lock; 0 for semaphores and
	// when not granted.
	Token int64
	// Err is nil when granted; otherwise what the call returned (wrapping
	// distsync.ErrNotAcquired when the wait budget was spent, ctx.Err()
	// when ctx ended first).
	Err error
}

// ReleaseInfo describes the release of one acquisition.
type ReleaseInfo struct {
	// Kind, Side and Name are as in AcquireInfo.
	Kind Kind
	Side string
	Name string
	// Start is when the release began: the call of Unlock (or Release), or
	// when distsync began to release on its own. The release took from
	// Start until the hook was called.
	Start time.Time
	// Held is how long the acquisition was held: from its grant until its
	// release was asked for.
	Held time.Duration
	// Auto is true when distsync released it because the context it was
	// acquired on ended.
	Auto bool
	// Err is nil when the release was applied; it wraps distsync.ErrNotHeld
	// when the server no longer held the acquisition (its lease had ended),
	// and is the failure when no attempt got an answer.
	Err error
}

// RenewInfo describes one batch of watchdog renewals.
type RenewInfo struct {
	// Leases is how many leases the batch renewed or tried to renew.
	Leases int
	// Latency is the time from sending the batch to its last reply.
	Latency time.Duration
	// Failed counts the renewals that did not extend their lease: failed
	// on the network or not acknowledged by the replicas (retried until
	// the lease's deadline), or found the lease gone.
	Failed int
	// Lost counts the leases the batch found lost; Lost is called for each
	// acquisition of them.
	Lost int
	// ByKind splits Leases and Failed by the kind of primitive, in the
	// order the kinds first appear in the batch.
	ByKind []RenewKind
}

// RenewKind is the part of a batch of renewals of one kind of primitive.
type RenewKind struct {
	// Kind is the primitive's kind (a Kind constant).
	Kind Kind
	// Leases and Failed are as in RenewInfo, for this kind.
	Leases int
	Failed int
}

// LostInfo describes an acquisition that ended without a release.
type LostInfo struct {
	// Kind, Side and Name are as in AcquireInfo.
	Kind Kind
	Side string
	Name string
	// Held is how long the acquisition was held, from its grant.
	Held time.Duration
	// Cause wraps distsync.ErrLeaseLost (the lease was found gone, taken,
	// or not renewed in time), distsync.ErrLeaseExpired (an explicit lease
	// ran out) or distsync.ErrClosed (the Client was closed while it was
	// held).
	Cause error
}
