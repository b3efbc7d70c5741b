//go:build !distsync_primitives

// The primitives this build of the command knows: the mutex. The read-write
// lock, fair lock, semaphores and latch plug in with the files built with
// the tag distsync_primitives (primitives_all.go lists them); once their
// packages are merged, delete this file and those files' build constraints.

package main

import (
	"errors"

	"github.com/distsync/distsync"
)

// demoSteps is the tour, in order.
var demoSteps = []demoStep{
	{"Two workers contend for a mutex", demoContention},
	{"Reentrancy: the owner locks again with its context", demoReentrancy},
	{"The watchdog keeps a lock past its lease", demoWatchdog},
	{"A lost lease cancels its holder", demoLostLease},
	{"Fencing tokens stop a paused holder", demoFencing},
}

// kinds are tried in order: the first that is sure of the keys is theirs,
// so a kind whose keys are a superset of another's comes before it.
var kinds = []*kind{mutexKind}

// newSemaphoreGuard is run --semaphore (run_semaphore.go when built with
// the semaphores).
func newSemaphoreGuard(*distsync.Client, string, int64) (guard, error) {
	return nil, errors.New("--semaphore: this build of distsync has no semaphores")
}
