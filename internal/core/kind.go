package core

// The kinds of primitive, one word each: the marker each stores with its
// state (so that a name never holds two kinds), what Inspect reports and
// what the observer is told. distsync.Kind exports them; a new primitive
// adds its word here and there.
const (
	KindMutex           = "mutex"
	KindRWLock          = "rwlock"
	KindFairLock        = "fairlock"
	KindSemaphore       = "semaphore"       // the counting semaphore
	KindPermitSemaphore = "permitsemaphore" // the permit-expiring semaphore
	KindLatch           = "latch"
	KindElection        = "election"
)

// Kind is a kind of primitive, one of the constants above (untyped, so that
// a script argument takes them as they are): the key of the registry of
// makers (Register, Make).
type Kind string

// The sides of a read-write lock, as the observer is told them ("" for
// other kinds).
const (
	SideRead  = "read"
	SideWrite = "write"
)
