package mutex

import (
	"context"
	"time"

	"github.com/distsync/distsync/internal/core"
)

// HoldID returns the identity of the acquisition ctx (a context Lock
// returned) carries, for another process to extend or release it (redsync's
// Value): a string, with no round trip. ErrNotHeld when ctx carries none or
// it ended.
func (m *Mutex) HoldID(ctx context.Context) (string, error) {
	m = core.OrZero(m)
	id, err := m.h.Core.HoldID(ctx, m.h.Key)
	if err != nil {
		return "", m.errorf(err)
	}
	return id, nil
}

// UnlockID releases the acquisition holdID names (HoldID), from any Client
// and any process, with Unlock's exactness: it returns nil if and only if
// the release was applied, and ErrNotHeld when it was not held. The holder's
// context ends at once: by this call when it holds through this Client,
// otherwise by push on its Client's control channel (ErrLeaseLost), or,
// where push cannot reach it (a Client whose waiters spin), at its next
// renewal or when its explicit lease ends. The holder's own Unlock then
// returns ErrNotHeld. A malformed holdID returns ErrInvalidArgument. One
// round trip.
func (m *Mutex) UnlockID(ctx context.Context, holdID string) error {
	m = core.OrZero(m)
	release := func(ctx context.Context, owner, id, by string) (int64, error) {
		return m.run(ctx, owner, id, core.ReleaseMemory, false, by)
	}
	if err := m.h.Core.ReleaseID(ctx, m.h.Key, release, holdID); err != nil {
		return m.errorf(err)
	}
	return nil
}

// ExtendID is Extend of the acquisition holdID names (HoldID), from any
// Client and any process: it moves the end of that acquisition's explicit
// lease to lease from now by the server's clock. It returns ErrNotHeld when
// the acquisition is not held (an ended lease is not revived), and
// ErrInvalidArgument, as Extend, for a lease under MinLease, a malformed
// holdID or a watchdog-renewed acquisition.
// The holder's own context keeps its end unless it holds through this
// Client: it may end before the server's lease. One round trip.
func (m *Mutex) ExtendID(ctx context.Context, holdID string, lease time.Duration) error {
	m = core.OrZero(m)
	if err := m.h.Core.ExtendID(ctx, m.h.Key, holdID, lease); err != nil {
		return m.errorf(err)
	}
	return nil
}
