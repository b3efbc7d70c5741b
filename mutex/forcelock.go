package mutex

import (
	"context"
	_ "embed"

	"github.com/distsync/distsync/internal/acquire"
	"github.com/distsync/distsync/internal/core"
)

var (
	//go:embed forcelock.lua
	forceLockLua string

	forceLockScript = core.NewScript(mxLua + forceLockLua)

	// forceLock is what every ForceLock shares.
	forceLock = acquire.Lock{Script: forceLockScript, PerAcquisition: true}
)

// forceHandle is the handle of a ForceLock: the mutex's, and the prefix of
// the control channels its script tells the replaced holder's Client on.
type forceHandle struct{ *handle }

func (h forceHandle) Extra() []string { return []string{h.c.ControlPrefix()} }

// ForceLock takes the lock whoever holds it, in one round trip: rueidislock's
// ForceWithContext, where ForceUnlock then Lock would be two calls, racy.
// The acquisition is Lock's (its context, the watchdog lease, Unlock), of a
// new hold with a new fencing token, larger than the replaced hold's: the
// resource the lock protects can refuse the replaced holder's writes. The
// replaced holder's context ends at once with ErrLeaseLost, by push to its
// Client (one PUBLISH), or, when its Client is not listening (it never
// locked a mutex, its waiters spin, or its connection is down), at its next
// renewal; its Unlock returns ErrNotHeld and never releases the new hold.
// Waiters keep their places and wait for the new holder. When the owner ctx
// carries holds the lock already, ForceLock re-enters. It does not wait: a
// transient failure is returned (what it may have granted is given back).
func (m *Mutex) ForceLock(ctx context.Context) (context.Context, error) {
	m = core.OrZero(m)
	if err := m.c.Closed(); err != nil {
		return ctx, m.errorf(err)
	}
	m.c.WatchControl()
	return acquire.Surface{Lock: &forceLock, H: forceHandle{(*handle)(m)}}.Acquire(ctx, 0, 0)
}
