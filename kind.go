package distsync

import "github.com/distsync/distsync/observe"

// Kind is a kind of primitive, as Info.Kind and the Observer name it.
type Kind = observe.Kind

// The kinds of primitive.
const (
	KindMutex           Kind = observe.KindMutex
	KindRWLock          Kind = observe.KindRWLock
	KindFairLock        Kind = observe.KindFairLock
	KindSemaphore       Kind = observe.KindSemaphore       // Client.Semaphore, the counting semaphore
	KindPermitSemaphore Kind = observe.KindPermitSemaphore // Client.PermitSemaphore, the permit-expiring semaphore
	KindLatch           Kind = observe.KindLatch
	KindElection        Kind = observe.KindElection // Client.Election: a leadership is an acquisition
)

// The sides of a read-write lock (Side of AcquireInfo, ReleaseInfo and
// LostInfo; Info's Mode).
const (
	SideRead  = observe.SideRead
	SideWrite = observe.SideWrite
)
