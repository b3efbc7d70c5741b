package acquire

import (
	"context"
	"fmt"
	"time"

	"github.com/distsync/distsync/internal/core"
)

// Lock is one lock-like primitive's acquisition, for Hold: a script that
// grants a hold under a hash of holds, waited for by Do and recorded by
// Holds.Grant. The mutex, the fair lock and both sides of the read-write
// lock acquire through it.
type Lock struct {
	Core    *core.Core
	Key     string // the hold's key in Holds
	What    string // the lock in logs, e.g. `mutex "orders"`
	Channel string // where releases notify
	// Script grants or refuses. Its arguments are owner, lease ms, waiter id,
	// waiter window ms, fencing counter lifetime ms, then Extra; it replies
	// {token, hold count} when it grants, {0, ms until retry (-1: unknown)}
	// when it refuses, or {code < 0, 0} for an error in Codes.
	Script *core.Script
	Keys   []string
	Extra  []string
	Codes  map[int64]error
	// Undo gives back a grant too few replicas acknowledged (core.TryAcquire).
	Undo func(ctx context.Context, owner, reqID string)
	// Leave removes a waiter that gave up.
	Leave func(ctx context.Context, owner string)
	// Renewal is what the watchdog runs to renew owner's hold.
	Renewal func(owner string) *core.Renewal
}

// Hold acquires l for owner, which ctx carries, waiting at most wait (< 0:
// until ctx is done) and holding for lease (0: the watchdog lease, renewed).
// It returns the hold's context (see core.Holds.Grant).
func Hold(ctx context.Context, l *Lock, owner string, wait, lease time.Duration) (context.Context, error) {
	c := l.Core
	leaseArg := core.Ms(lease)
	if lease == 0 {
		leaseArg = core.Ms(c.Lease)
	}
	args := append([]string{owner, leaseArg, "", core.Ms(c.WaiterWindow), core.Ms(c.FenceTTL)}, l.Extra...)
	var token int64
	var sentAt time.Time
	try := func(actx context.Context, waiter string) (bool, time.Duration, error) {
		sentAt = time.Now()
		a := append([]string(nil), args...)
		a[2] = waiter
		res, err := c.TryAcquire(actx, l.Script, l.Keys, a,
			func(uctx context.Context, reqID string) { l.Undo(uctx, owner, reqID) })
		if err != nil {
			return false, 0, err
		}
		switch {
		case res[0] < 0:
			if err := l.Codes[res[0]]; err != nil {
				return false, 0, err
			}
			return false, 0, fmt.Errorf("unexpected reply %v", res)
		case res[0] == 0:
			return false, core.RetryAfter(res[1]), nil
		}
		token = res[0]
		return true, 0, nil
	}
	err := Do(ctx, Wait{
		Notifier: c.Notifier,
		Channel:  l.Channel,
		Waiter:   owner,
		Budget:   wait,
		Window:   c.WaiterWindow,
		Leave:    func(lctx context.Context) { l.Leave(lctx, owner) },
	}, try)
	if err != nil {
		return nil, err
	}
	lctx, _ := c.Holds.Grant(ctx, l.Key, owner, l.What, token, sentAt, lease, l.Renewal(owner))
	return lctx, nil
}
