// The primitives the command knows: the tour's steps, the kinds inspect
// recognises, and the guard run --semaphore uses.

package main

import (
	"context"

	"github.com/distsync/distsync"
)

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

// kinds are the primitives inspect, unlock and delete know, by the names
// distsync.Info.Kind gives them.
var kinds = []*kind{
	{name: distsync.KindMutex, forceUnlock: func(ctx context.Context, c *distsync.Client, name string) (bool, error) {
		m, err := c.Mutex(name)
		if err != nil {
			return false, err
		}
		return m.ForceUnlock(ctx)
	}},
	{name: distsync.KindFairLock, forceUnlock: func(ctx context.Context, c *distsync.Client, name string) (bool, error) {
		f, err := c.FairLock(name)
		if err != nil {
			return false, err
		}
		return f.ForceUnlock(ctx)
	}},
	{name: distsync.KindRWLock, forceUnlock: func(ctx context.Context, c *distsync.Client, name string) (bool, error) {
		rw, err := c.RWLock(name)
		if err != nil {
			return false, err
		}
		w, err := rw.Write().ForceUnlock(ctx)
		if err != nil {
			return false, err
		}
		r, err := rw.Read().ForceUnlock(ctx)
		return w || r, err
	}},
	// A semaphore has no holds to force: permits of the permit semaphore
	// return by themselves when their lease ends. Delete removes it whole,
	// with its kind.
	{name: distsync.KindSemaphore, remove: removeWith((*distsync.Client).Semaphore)},
	{name: distsync.KindPermitSemaphore, remove: removeWith((*distsync.Client).PermitSemaphore)},
	{name: distsync.KindLatch, remove: removeWith((*distsync.Client).Latch)},
	// An election's leadership is its hold: unlock --force deposes the
	// leader (ForceResign), and the head candidate leads. delete refuses
	// it: deleting the candidates would leave them campaigning blind.
	{name: distsync.KindElection, forceUnlock: func(ctx context.Context, c *distsync.Client, name string) (bool, error) {
		e, err := c.Election(name)
		if err != nil {
			return false, err
		}
		return e.ForceResign(ctx)
	}},
}

// removeWith is the remove of a kind whose handle, made by open, has Delete.
func removeWith[H interface {
	Delete(context.Context) (bool, error)
}](open func(*distsync.Client, string) (H, error)) func(context.Context, *distsync.Client, string) (bool, error) {
	return func(ctx context.Context, c *distsync.Client, name string) (bool, error) {
		h, err := open(c, name)
		if err != nil {
			return false, err
		}
		return h.Delete(ctx)
	}
}
