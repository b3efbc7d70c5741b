package distsync

import "github.com/distsync/distsync/internal/core"

// Kind is a kind of primitive: the one set of names that Info.Kind, the
// Observer's AcquireInfo, ReleaseInfo and LostInfo, the otel adapter's
// distsync.kind attribute and the command use. Each is also the marker the
// primitive stores with its state, so a name never holds two kinds at once.
type Kind string

// The kinds of primitive.
const (
	KindMutex           Kind = core.KindMutex
	KindRWLock          Kind = core.KindRWLock
	KindFairLock        Kind = core.KindFairLock
	KindSemaphore       Kind = core.KindSemaphore       // Client.Semaphore, the counting semaphore
	KindPermitSemaphore Kind = core.KindPermitSemaphore // Client.PermitSemaphore, the permit-expiring semaphore
	KindLatch           Kind = core.KindLatch
	KindElection        Kind = core.KindElection // Client.Election: a leadership is an acquisition
)

// The sides of a read-write lock, as AcquireInfo, ReleaseInfo, LostInfo
// (Side) and Info (Mode, Owner.Mode, Waiter.Mode) name them.
const (
	SideRead  string = core.SideRead
	SideWrite string = core.SideWrite
)
