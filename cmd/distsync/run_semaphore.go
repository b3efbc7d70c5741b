package main

import (
	"errors"

	"github.com/distsync/distsync"
)

// newSemaphoreGuard is run --semaphore NAME --permits N: one permit of the
// permit-expiring semaphore NAME (its lease renewed by the watchdog), whose
// size is set to N when it has none.
func newSemaphoreGuard(c *distsync.Client, name string, permits int64) (guard, error) {
	return nil, errors.New("--semaphore: this build of distsync has no semaphores")
}
