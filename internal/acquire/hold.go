package acquire

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/distsync/distsync/internal/core"
)

// Lock is one lock-like primitive's acquisition, for Hold: a script that
// grants an acquisition of a hold under a hash of holds, waited for by Do
// and recorded by Holds.Grant. The mutex, the fair lock and both sides of
// the read-write lock acquire through it.
type Lock struct {
	Core    *core.Core
	Key     string // the hold's key in Holds
	What    string // the lock in logs, e.g. `mutex "orders"`
	Kind    string // the lock's kind and name for the observer (see Track)
	Name    string
	Channel string // where releases notify
	// Script grants or refuses. Its arguments are owner, lease ms, waiter
	// id, waiter window ms, fencing counter lifetime ms, acquisition id,
	// mode ('w' renewed by the watchdog, 'e' an explicit lease), then Extra.
	// It replies {token, hold count} when it granted (or had granted this
	// acquisition before: a repeated attempt), {0, ms until retry (-1:
	// unknown)} when it refused, or {code < 0, 0} for an error in Codes
	// (CodeFinished: the acquisition was released or given up before).
	Script *core.Script
	Keys   []string
	Extra  []string
	Codes  map[int64]error
	// Release releases acquisition id of owner once (core.ReleaseFunc).
	Release func(ctx context.Context, owner, id string, life time.Duration) (int64, error)
	// Leave removes a waiter that gave up.
	Leave func(ctx context.Context, owner string) error
	// Renewal is what the watchdog runs to renew owner's hold.
	Renewal func(owner string) *core.Renewal
}

// CodeFinished is the reply code of an attempt whose acquisition was
// released or given up before it arrived.
const CodeFinished = -2

// ErrFinished is the error of an attempt refused with CodeFinished.
var ErrFinished = errors.New("acquisition given up before the attempt arrived")

// Hold acquires l for owner, which ctx carries, waiting at most wait (< 0:
// until ctx is done) and holding for lease (0: the watchdog lease, renewed).
// It returns the acquisition's context (see core.Holds.Grant).
//
// Every attempt carries the acquisition's id, so attempts repeated after a
// transient failure never grant twice. When Hold fails after an attempt
// whose outcome is unknown (its reply was lost, it timed out, ctx ended or
// the Client closed while it was on the wire), or when the grant came back
// after ctx ended or the Client closed, what may have been granted is given
// back (core.Undo), and the error returned.
func Hold(ctx context.Context, l *Lock, owner string, wait, lease time.Duration) (context.Context, error) {
	c := l.Core
	if err := c.Track(); err != nil {
		return nil, err
	}
	defer c.Untrack()
	id := core.NewAcqID()
	mode, leaseArg := "w", core.Ms(c.Lease)
	if lease > 0 {
		mode, leaseArg = "e", core.Ms(lease)
	}
	args := append([]string{owner, leaseArg, "", core.Ms(c.WaiterWindow), core.Ms(c.FenceTTL), id, mode}, l.Extra...)
	release := func(ctx context.Context, id string, life time.Duration) (int64, error) {
		return l.Release(ctx, owner, id, life)
	}
	var token int64
	t := Track{Kind: l.Kind, Name: l.Name}
	try := func(actx context.Context, waiter string) (bool, time.Duration, error) {
		sent := time.Now()
		a := append([]string(nil), args...)
		a[2] = waiter
		res, err := c.TryAcquire(actx, l.Script, l.Keys, a)
		if err != nil {
			return false, 0, t.Sent(sent, false, err)
		}
		switch {
		case res[0] == CodeFinished:
			return false, 0, ErrFinished
		case res[0] < 0:
			if err := l.Codes[res[0]]; err != nil {
				return false, 0, err
			}
			return false, 0, fmt.Errorf("unexpected reply %v", res)
		case res[0] == 0:
			return false, core.RetryAfter(res[1]), nil
		}
		token = res[0]
		return true, 0, t.Sent(sent, true, nil)
	}
	undo := func() { c.Undo(l.What, id, lease, release) }
	w := WaitFor(c, l.Channel, owner, wait, func(lctx context.Context) error { return l.Leave(lctx, owner) })
	w.Track = &t
	err := Do(ctx, w, try)
	if err := t.Finish(ctx, err, undo); err != nil {
		t.Report(ctx, c, 0, err)
		return nil, err
	}
	lctx, _, err := c.Holds.Grant(ctx, core.Grant{
		Key: l.Key, Owner: owner, What: l.What, Kind: l.Kind, Name: l.Name, ID: id, Token: token, SentAt: t.SentAt(),
		Lease: lease, Renewal: l.Renewal(owner), Release: release, Unknown: t.Unknown(),
	})
	if err != nil {
		undo()
	}
	t.Report(ctx, c, token, err)
	return lctx, err
}
