package acquire

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/distsync/distsync/internal/core"
)

// Lock is what the acquisitions of one kind of lock-like primitive share,
// for Hold: a script that grants an acquisition of a hold under a hash of
// holds, waited for by Do and recorded by Holds.Grant. The mutex, the fair
// lock and both sides of the read-write lock acquire through it: each keeps
// one per kind, and its handles implement Handle, so that a handle costs no
// copy of what its kind shares.
type Lock struct {
	// Script grants or refuses. Its keys are Handle.Keys; its arguments are
	// owner, lease ms, waiter id, waiter window ms, fencing counter lifetime
	// ms, acquisition id, mode ('w' renewed by the watchdog, 'e' an explicit
	// lease), then Handle.Extra. It replies {token, hold count} when it
	// granted (or had granted this acquisition before: a repeated attempt),
	// {0, ms until retry (-1: unknown)} when it refused, or {code < 0, 0} for
	// an error in Codes (CodeFinished: the acquisition was released or given
	// up before).
	Script *core.Script
	Codes  map[int64]error
	// Handoff says that releases may grant the lock to a waiter directly
	// and tell it so ('g:' notifications, see mutex/mx.lua); refusals then
	// reply {0, ms until retry, server ms}.
	Handoff bool
	// PerAcquisition registers a waiter as WaiterID(owner, acquisition id)
	// rather than as its owner: two waiting goroutines of one owner are two
	// waiters, and one giving up leaves the other's registration.
	PerAcquisition bool
	// ModeInWaiter (with PerAcquisition) adds ':<mode><lease ms>' to the
	// waiter id, so that a release can grant the acquisition from the id
	// alone (fairlock/fl.lua).
	ModeInWaiter bool
}

// WaiterID is the waiter id of acquisition id of owner, for the kinds whose
// waiters are acquisitions (Lock.PerAcquisition): like an owner, it starts
// with the Client's id and a ':'.
func WaiterID(owner, id string) string { return owner + ":" + id }

// Handle is one named lock of a Lock's kind: the primitive's handle, under
// a type of the primitive's package that its API does not show. Holds keep
// it (core.Holdable) for as long as they live.
type Handle interface {
	core.Holdable
	Core() *core.Core
	// Key is the hold's key in Holds.
	Key() string
	// Channel is where releases notify this Client's waiters.
	Channel() string
	// Keys returns the script's keys for acquisition id.
	Keys(id string) []string
	// Extra returns the script's arguments after the mode.
	Extra() []string
	// Leave removes waiter (its owner, or WaiterID with PerAcquisition),
	// which gave up waiting for acquisition id, and gives back what a
	// release may have handed it (with Handoff).
	Leave(ctx context.Context, waiter, id string) error
	// Errorf wraps an error with the primitive and its name.
	Errorf(err error) error
}

// CodeFinished is the reply code of an attempt whose acquisition was
// released or given up before it arrived.
const CodeFinished = -2

// ErrFinished is the error of an attempt refused with CodeFinished.
var ErrFinished = errors.New("acquisition given up before the attempt arrived")

// Hold acquires h, a lock of kind l, for owner, which ctx carries, waiting
// at most wait (< 0: until ctx is done) and holding for lease (0: the
// watchdog lease, renewed). It returns the acquisition's context (see
// core.Holds.Grant).
//
// Every attempt carries the acquisition's id, so attempts repeated after a
// transient failure never grant twice. When Hold fails after an attempt
// whose outcome is unknown (its reply was lost, it timed out, ctx ended or
// the Client closed while it was on the wire), or when the grant came back
// after ctx ended or the Client closed, what may have been granted is given
// back (core.Undo), and the error returned. A grant refused because its
// reply came after its lease could have ended is given back, and a new
// acquisition tried within what is left of wait (AgainIfLate).
func Hold(ctx context.Context, l *Lock, h Handle, owner string, wait, lease time.Duration) (context.Context, error) {
	return AgainIfLate(ctx, wait, func(wait time.Duration) (context.Context, error) {
		return hold(ctx, l, h, owner, wait, lease)
	})
}

// hold is one acquisition of Hold, with one id.
func hold(ctx context.Context, l *Lock, h Handle, owner string, wait, lease time.Duration) (context.Context, error) {
	c := h.Core()
	if err := c.Track(); err != nil {
		return nil, err
	}
	defer c.Untrack()
	id := core.NewAcqID()
	mode, leaseArg := "w", core.Ms(c.Lease)
	if lease > 0 {
		mode, leaseArg = "e", core.Ms(lease)
	}
	args := append([]string{owner, leaseArg, "", core.Ms(c.WaiterWindow), core.Ms(c.FenceTTL), id, mode}, h.Extra()...)
	keys := h.Keys(id)
	// What the closures below share, in one allocation.
	g := &struct {
		t           Track
		token       int64
		serverLease time.Duration // of a lock handed to this waiter
		regSent     time.Time     // the send of the last refused attempt
		regAt       int64         // and the server's ms when it ran
	}{t: Track{Name: h.Name()}}
	t := &g.t
	t.Kind, t.Side = h.Kind()
	try := func(actx context.Context, waiter string) (bool, time.Duration, error) {
		sent := time.Now()
		a := args
		if waiter != "" {
			a = append([]string(nil), args...)
			a[2] = waiter
		}
		res, err := c.TryAcquire(actx, l.Script, keys, a)
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
			if len(res) > 2 {
				g.regSent, g.regAt = sent, res[2]
			}
			return false, core.RetryAfter(res[1]), nil
		}
		g.token, g.serverLease = res[0], 0
		return true, 0, t.Sent(sent, true, nil)
	}
	// handed takes a grant a release made to this waiter: "<acquisition
	// id> <token> <server ms>". The lease it left is the hand-off lease (or
	// the explicit lease when shorter), counted from the grant, which came
	// after the last refusal: by this process's clock no earlier than that
	// refusal's send plus the server time between the two, less the drift.
	// When that lease is too long to take without a renewal (an explicit
	// lease beyond the hand-off lease) or too close to its end, the waiter
	// attempts once more instead, which confirms the grant and extends it.
	handed := func(data string) bool {
		f := strings.Fields(data)
		if len(f) != 3 || f[0] != id || g.regSent.IsZero() {
			return false
		}
		if c.AckReplicas > 0 {
			// The releaser's grant was not acknowledged by replicas for this
			// waiter: its attempt (a repeat of the handed grant, renewing
			// it) runs with a WAIT that covers it.
			return false
		}
		tok, err1 := strconv.ParseInt(f[1], 10, 64)
		at, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		_, sl := c.Tuned(ctx)
		if lease > 0 {
			if lease > sl {
				return false
			}
			sl = lease
		}
		d := time.Duration(at-g.regAt) * time.Millisecond
		from := g.regSent.Add(d - core.Drift(d.Abs()))
		if !time.Now().Before(from.Add(sl - core.Drift(sl) - sl/3)) {
			return false
		}
		g.token, g.serverLease = tok, sl
		t.Sent(from, true, nil)
		return true
	}
	undo := func() {
		c.Undo(h.What(), id, lease, func(ctx context.Context, id string, life time.Duration) (int64, error) {
			return h.Release(ctx, owner, id, life)
		})
	}
	waiter := owner
	if l.PerAcquisition {
		waiter = WaiterID(owner, id)
	}
	if l.ModeInWaiter {
		waiter += ":" + mode + leaseArg
	}
	w := WaitFor(c, h.Channel(), waiter, wait, func(lctx context.Context) error { return h.Leave(lctx, waiter, id) })
	_, w.Bound = c.Tuned(ctx) // a waiter nudged as the next in line
	if l.Handoff {
		w.Handed = handed
	}
	w.Track = t
	err := Do(ctx, w, try)
	if err := t.Finish(ctx, err, undo); err != nil {
		t.Report(ctx, c, 0, err)
		return nil, err
	}
	lctx, _, err := c.Holds.Grant(ctx, core.Grant{
		Key: h.Key(), Owner: owner, Lock: h, ID: id, Token: g.token, SentAt: t.SentAt(),
		Lease: lease, ServerLease: g.serverLease, Unknown: t.Unknown(),
	})
	if err != nil {
		undo()
	} else {
		promised := lease
		if promised == 0 {
			promised = c.Lease
		}
		if g.serverLease > 0 && g.serverLease < promised {
			promised = g.serverLease
		}
		core.ReportGrant(ctx, t.SentAt(), promised)
	}
	t.Report(ctx, c, g.token, err)
	return lctx, err
}
