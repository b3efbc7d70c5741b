package core

// Kind is a kind of primitive, as the registry of makers (Register, Make)
// is keyed.
type Kind string

// The kinds of primitive, one word each: the marker each stores with its
// state (so that a name never holds two kinds), what Inspect reports, what
// the observer is told and the registry's keys. distsync.Kind exports them;
// a new primitive adds its word here and there. They are untyped, so that
// they serve as script arguments and Kind alike.
const (
	KindMutex           = "mutex"
	KindRWLock          = "rwlock"
	KindFairLock        = "fairlock"
	KindSemaphore       = "semaphore"       // the counting semaphore
	KindPermitSemaphore = "permitsemaphore" // the permit-expiring semaphore
	KindLatch           = "latch"
	KindElection        = "election"
)

// The sides of a read-write lock, as the observer is told them ("" for
// other kinds).
const (
	SideRead  = "read"
	SideWrite = "write"
)
