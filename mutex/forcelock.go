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
	forceLock = acquire.Lock{Script: forceLockScript, PerAcquisition: true, JoinsWaiter: true, LastKeyWaits: true}
)

// ForceLock takes the lock whoever holds it, in one round trip and without
// waiting (rueidislock's ForceWithContext): an acquisition as Lock's, of a
// new hold whose fencing token is larger than the replaced hold's. The
// replaced holder's context ends with ErrLeaseLost at once by push to its
// Client, or at its next renewal when that Client is not listening; its
// Unlock returns ErrNotHeld. Waiters keep their places. When the owner ctx
// carries holds the lock already, it re-enters. A transient failure is
// returned, and what it may have granted given back.
func (m *Mutex) ForceLock(ctx context.Context) (context.Context, error) {
	m = core.OrZero(m)
	if err := m.h.Core.Closed(); err != nil {
		return ctx, m.errorf(err)
	}
	m.h.Core.WatchControl()
	// The mutex's handle, with the prefix of the control channels the
	// script tells the replaced holder's Client on.
	h := *m.s()
	h.Lock, h.Also = &forceLock, &acquire.Also{Extra: []string{m.h.Core.ControlPrefix()}}
	return h.Acquire(ctx, 0, 0)
}
