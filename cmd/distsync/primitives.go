// The primitives the command knows: the tour's steps, the kinds inspect
// recognises, and the guard run --semaphore uses.

package main

// demoSteps is the tour, in order.
var demoSteps = []demoStep{
	{"Two workers contend for a mutex", demoContention},
	{"Reentrancy: the owner locks again with its context", demoReentrancy},
	{"The watchdog keeps a lock past its lease", demoWatchdog},
	{"A lost lease cancels its holder", demoLostLease},
	{"A fair lock grants in arrival order", demoFairLock},
	{"The parking lot: a permit semaphore", demoParkingLot},
	{"A cache guarded by a read-write lock", demoRWCache},
	{"A countdown latch", demoLatch},
	{"Fencing tokens stop a paused holder", demoFencing},
}

// kinds are tried in order: the first that is sure of the keys is theirs,
// so a kind whose keys are a superset of another's comes before it (the fair
// lock's keys are a mutex's plus its queue).
var kinds = []*kind{fairlockKind, mutexKind, rwlockKind, semaphoreKind, latchKind}
