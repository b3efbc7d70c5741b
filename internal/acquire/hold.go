package acquire

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/distsync/distsync/internal/core"
	"github.com/distsync/distsync/observe"
)

// Lock is what the acquisitions of one kind of lock-like primitive share,
// for Handle.Acquire: a script that grants an acquisition of a hold under
// a hash of holds, waited for by Do and recorded by Holds.Grant. The mutex,
// the fair lock, both sides of the read-write lock and the election acquire
// through it: each keeps one per kind, which its Handles point to.
type Lock struct {
	// Script grants or refuses. Its keys are Ops.Keys; its arguments are
	// owner, lease ms, waiter id ('' when the caller will not wait), waiter
	// window ms, acquisition id, mode ('w' renewed by the watchdog, 'e' an
	// explicit lease), then Handle.Also.Extra (with JoinsWaiter, others:
	// see there). It replies {token, hold count} when it
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
	// PerAcquisition registers a waiter as '<owner>:<acquisition id>'
	// (core.NewAcq's joined name; like an owner, it starts with the
	// Client's id and a ':') rather than as its owner: two waiting
	// goroutines of one owner are two waiters, and one giving up leaves the
	// other's registration.
	PerAcquisition bool
	// ModeInWaiter (with PerAcquisition) adds ':<mode><lease ms>' to the
	// waiter id, so that a release can grant the acquisition from the id
	// alone (fairlock/fl.lua).
	ModeInWaiter bool
	// SaysListens (with ModeInWaiter) ends the waiter id in 'l' when the
	// waiter will listen on its Client's channel (it does not spin: it
	// registers only once subscribed), so that a release may pass over a
	// waiter whose Client no longer listens (rwlock/rw.lua, rw_gone;
	// fairlock/fl.lua). Only for kinds whose waiters are told on a channel
	// of their Client's own: on one channel for every Client, the server
	// cannot tell one Client's subscription from another's, unless with
	// Presence.
	SaysListens bool
	// Presence (with SaysListens) is for a kind whose waiters of every
	// Client listen on one channel (the election's, where a wake-up may be
	// for every candidate): each waiter listens besides on
	// '<Channel>:<client id>' (Wait.Presence), where nothing is published,
	// for a release to ask whether the waiter's Client still listens
	// (internal/core/queue.lua, dsq_head).
	Presence bool
	// JoinsWaiter (with PerAcquisition, not ModeInWaiter) says that the
	// script joins the waiter id '<owner>:<acquisition id>' itself, when it
	// needs it: its arguments are owner, lease ms, acquisition id, mode,
	// Extra, then the waiter window ms when the caller waits (none when it
	// does not) and 'l' when the waiter listens on its channel (it
	// subscribed; a waiter that spins does not), so that a release may
	// pass over a waiter whose Client no longer listens (mutex/mx.lua). An
	// attempt that does not wait sends two fewer for the server to parse.
	JoinsWaiter bool
	// LastKeyWaits says that the last of Ops.Keys is touched only by an
	// attempt that waits (the mutex's waiter entries): one that does not
	// wait sends the keys without it.
	LastKeyWaits bool
}

// Handle describes one named lock of a Lock's kind: what acquiring,
// holding and renewing need of it. A primitive makes it with the primitive
// and calls its methods (surface.go) from its own documented ones; holds
// keep it (as core.Holdable) for as long as they live.
type Handle struct {
	Lock *Lock
	Core *core.Core
	// Kind is the primitive's kind, Name its name: what the observer is
	// told.
	Kind observe.Kind
	Name string
	// Key is the hold's key in Holds, and the hash whose marker ('#k')
	// tells the primitive's kind unless Also.Hash is another.
	Key string
	// Channel is where releases notify this Client's waiters.
	Channel string
	// Ops is what the primitive does its own way.
	Ops Ops
	// Also is what only some kinds have, nil for none of it: kept apart,
	// so that the Handle every hold keeps (in its primitive) is small.
	Also *Also
}

// Also is what a Handle of some kinds has besides (Handle.Also).
type Also struct {
	// Side is a read-write lock's side (observe.SideRead, SideWrite), told
	// to the observer.
	Side string
	// What names the lock in logs (`mutex "orders"`); ErrPrefix starts its
	// errors (Errorf). Left empty, each is the kind and the quoted name,
	// made when needed rather than kept by every handle.
	What, ErrPrefix string
	// Hash, when set, is the hash whose marker tells the kind, if not Key.
	Hash string
	// Extra are the script's arguments after the mode.
	Extra []string
	// Renewed, when > 0, is the lease the watchdog renews holds to, rather
	// than the Client's watchdog lease.
	Renewed time.Duration
}

// noAlso is the Also of a Handle without one: read, never written.
var noAlso Also

// also returns h.Also, or an empty one.
func (h *Handle) also() *Also {
	if h.Also == nil {
		return &noAlso
	}
	return h.Also
}

// what is What, or the kind and the quoted name.
func (h *Handle) what() string {
	if w := h.also().What; w != "" {
		return w
	}
	return string(h.Kind) + " " + strconv.Quote(h.Name)
}

// Made returns h when it was made, and otherwise (a primitive no Client
// made, such as its zero value) the Handle describe makes.
func Made(h *Handle, describe func() Handle) *Handle {
	if h.Lock == nil {
		d := describe()
		return &d
	}
	return h
}

// Ops are the behaviours of a Handle that differ between primitives.
type Ops interface {
	// Keys appends the script's keys for acquisition id to dst.
	Keys(dst []string, id string) []string
	// Release releases acquisition id of owner on the server once,
	// remembering the release for life (core.Holdable.Release).
	Release(ctx context.Context, owner, id string, life time.Duration) (int64, error)
	// Leave removes waiter (its owner, or '<owner>:<id>' with PerAcquisition),
	// which gave up waiting for acquisition id, and gives back what a
	// release may have handed it (with Handoff).
	Leave(ctx context.Context, waiter, id string) error
	// Renewal is what the watchdog runs to renew owner's hold
	// (core.Holdable.Renewal).
	Renewal(owner string) core.Renewal
}

// held is a Handle as core.Holdable: what holds keep.
type held struct{ h *Handle }

func (h held) What() string                 { return h.h.what() }
func (h held) Kind() (observe.Kind, string) { return h.h.Kind, h.h.also().Side }
func (h held) Name() string                 { return h.h.Name }

func (h held) Release(ctx context.Context, owner, id string, life time.Duration) (int64, error) {
	return h.h.Ops.Release(ctx, owner, id, life)
}

func (h held) Renewal(owner string) core.Renewal { return h.h.Ops.Renewal(owner) }

// CodeFinished is the reply code of an attempt whose acquisition was
// released or given up before it arrived.
const CodeFinished = -2

// ErrFinished is the error of an attempt refused with CodeFinished.
var ErrFinished = errors.New("acquisition given up before the attempt arrived")

// attempt is one acquisition of a lock h for owner: the id its
// attempts carry, their arguments, and what they learnt. Its methods are
// the steps of the acquisition: hold runs it, try is one attempt (Do's
// Attempt), handed takes a grant a release handed the waiter (Wait.Handed),
// leave gives up waiting (Wait.Leave) and giveBack returns what may have
// been granted (core.Undo).
type attempt struct {
	h       *Handle
	c       *core.Core
	oid     string // the owner's id (core.WithOwner)
	owner   string
	id      string
	waiter  string        // owner, or '<owner>:<id>' with PerAcquisition
	lease   time.Duration // the explicit lease (0: renewed)
	renewed time.Duration // the lease the watchdog renews to
	args    []string
	keys    []string
	// What args and keys take, but for kinds with more of them: the
	// attempt is one allocation.
	argv [6]string
	keyv [5]string

	t           Track
	token       int64
	serverLease time.Duration // of a lock handed to this waiter
	reg         Refusal       // the last refused attempt
	listens     bool          // the attempt's waiter listens on its channel (Wait.Listening)
}

// hold runs the acquisition, with one id, waiting at most wait (< 0:
// until ctx is done) and holding for a.lease (0: the watchdog lease,
// renewed). It returns the acquisition's context (see core.Holds.Grant).
//
// Every attempt carries the acquisition's id, so attempts repeated after a
// transient failure never grant twice. When hold fails after an attempt
// whose outcome is unknown (its reply was lost, it timed out, ctx ended or
// the Client closed while it was on the wire), or when the grant came back
// after ctx ended or the Client closed, what may have been granted is given
// back (core.Undo), and the error returned. A grant refused because its
// reply came after its lease could have ended is given back, and the error
// is a core.LateGrant (Handle.Acquire then tries a new acquisition).
func (a *attempt) hold(ctx context.Context, wait time.Duration) (context.Context, error) {
	c, h := a.c, a.h
	if err := c.Track(); err != nil {
		return nil, err
	}
	defer c.Untrack()
	var joined string // owner:id
	a.owner, a.id, joined = c.NewAcq(a.oid)
	a.renewed = c.Lease
	if r := h.also().Renewed; r > 0 {
		a.renewed = r
	}
	mode, leaseArg := "w", core.Ms(a.renewed)
	if a.lease > 0 {
		mode, leaseArg = "e", core.Ms(a.lease)
	}
	if h.Lock.JoinsWaiter {
		a.args = append(append(a.argv[:0], a.owner, leaseArg, a.id, mode), h.also().Extra...)
	} else {
		a.args = append(append(a.argv[:0], a.owner, leaseArg, "", core.Ms(c.WaiterWindow), a.id, mode), h.also().Extra...)
	}
	a.keys = h.Ops.Keys(a.keyv[:0], a.id)
	t := &a.t
	t.Kind, t.Side, t.Name = h.Kind, h.also().Side, h.Name
	a.waiter = a.owner
	if h.Lock.PerAcquisition {
		a.waiter = joined // a.owner + ":" + a.id
	}
	w := WaitFor(c, h.Channel, "", wait, nil)
	if h.Lock.Presence {
		w.Presence = h.Channel + ":" + c.ID
	}
	if h.Lock.ModeInWaiter {
		a.waiter += ":" + mode + leaseArg
		if h.Lock.SaysListens && !w.spins(ctx) {
			a.waiter += "l"
		}
	}
	w.Waiter = a.waiter
	w.Bound = c.HandoffLease // a waiter nudged as the next in line
	w.att = a                // a.leave, and a.handed with h.Lock.Handoff
	w.Track = t
	w.Listening = &a.listens
	err := Do(ctx, w, a.try)
	if err := t.Finish(ctx, err, a.giveBack); err != nil {
		t.Report(ctx, c, 0, err)
		return nil, err
	}
	lctx, _, err := c.Holds.Grant(ctx, core.Grant{
		Key: h.Key, Owner: a.owner, Lock: held{h}, ID: a.id, Token: a.token, SentAt: t.SentAt(),
		Lease: a.lease, Renewed: a.renewed, ServerLease: a.serverLease, Unknown: t.Unknown(),
	})
	if err != nil {
		a.giveBack()
	} else {
		promised := a.lease
		if promised == 0 {
			promised = a.renewed
		}
		if a.serverLease > 0 && a.serverLease < promised {
			promised = a.serverLease
		}
		core.ReportGrant(ctx, t.SentAt(), promised)
	}
	t.Report(ctx, c, a.token, err)
	return lctx, err
}

// try is one attempt (Attempt): it runs the kind's script with the
// acquisition's keys and arguments and reads its reply.
func (a *attempt) try(actx context.Context, waiter string) (bool, time.Duration, error) {
	t := &a.t
	sent := time.Now()
	args := a.args
	switch {
	case waiter == "":
	case a.h.Lock.JoinsWaiter:
		// The script makes the waiter id from the owner and the
		// acquisition id when it gets the window. It goes in a.argv's
		// spare room when there is one: the request is written before
		// TryAcquire returns, and an attempt that does not wait sends
		// a.args alone.
		args = append(args, core.Ms(a.c.WaiterWindow))
		if a.listens {
			args = append(args, "l")
		}
	default:
		args = append([]string(nil), a.args...)
		args[2] = waiter
	}
	var buf [4]int64
	keys := a.keys
	if a.h.Lock.LastKeyWaits && waiter == "" {
		keys = keys[:len(keys)-1]
	}
	res, err := a.c.TryAcquire(actx, a.h.Lock.Script, keys, args, buf[:0])
	if err != nil {
		return false, 0, t.Sent(sent, false, err)
	}
	switch {
	case res[0] == CodeFinished:
		return false, 0, ErrFinished
	case res[0] < 0:
		if err := a.h.Lock.Codes[res[0]]; err != nil {
			return false, 0, err
		}
		return false, 0, fmt.Errorf("unexpected reply %v", slices.Clone(res))
	case res[0] == 0:
		if len(res) > 2 {
			a.reg = Refusal{Sent: sent, At: res[2]}
		}
		return false, core.RetryAfter(res[1]), nil
	}
	a.token, a.serverLease = res[0], 0
	if len(res) > 2 && res[2] == 1 {
		t.takeOver = true // a ForceLock replaced a holder
	}
	return true, 0, t.Sent(sent, true, nil)
}

// handed takes a grant a release made to this waiter: "<acquisition id>
// <token> <server ms>", timed by Refusal.Handed.
func (a *attempt) handed(data string) bool {
	f := strings.Fields(data)
	if len(f) != 3 || f[0] != a.id {
		return false
	}
	tok, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return false
	}
	from, sl, ok := a.reg.Handed(a.c, f[2], a.lease)
	if !ok {
		return false
	}
	a.token, a.serverLease = tok, sl
	a.t.Sent(from, true, nil)
	return true
}

// Refusal is a waiter's last refused attempt: its send, and the server's
// ms when it ran (a refusal's third reply field, where releases grant).
type Refusal struct {
	Sent time.Time
	At   int64
}

// Handed times a grant a release made to the waiter at server ms at (a
// decimal string), for an acquisition with the explicit lease (0: renewed by
// the watchdog). The lease the grant left is the hand-off lease (or the
// explicit lease when shorter), counted from the grant, which came after
// the refusal r: by this process's clock no earlier than from, r's send
// plus the server time between the two, less the drift. It returns from,
// that lease sl, and false when the waiter must attempt once more instead,
// which confirms the grant and extends it: the lease is too long to take
// without a renewal (an explicit lease beyond the hand-off lease) or too
// close to its end, no refusal was seen, or replicas must acknowledge.
func (r Refusal) Handed(c *core.Core, at string, lease time.Duration) (from time.Time, sl time.Duration, ok bool) {
	if r.Sent.IsZero() || c.AckReplicas > 0 {
		// With replica acknowledgement, the releaser's grant was not
		// acknowledged for this waiter: its attempt (a repeat of the
		// handed grant, renewing it) runs with a WAIT that covers it.
		return time.Time{}, 0, false
	}
	ms, err := strconv.ParseInt(at, 10, 64)
	if err != nil {
		return time.Time{}, 0, false
	}
	sl = c.HandoffLease
	if lease > 0 {
		if lease > sl {
			return time.Time{}, 0, false
		}
		sl = lease
	}
	d := time.Duration(ms-r.At) * time.Millisecond
	from = r.Sent.Add(d - core.Drift(d.Abs()))
	if !time.Now().Before(from.Add(sl - core.Drift(sl) - sl/3)) {
		return time.Time{}, 0, false
	}
	return from, sl, true
}

// leave removes the waiter, which gave up, and gives back what a release
// may have handed it (Ops.Leave).
func (a *attempt) leave(ctx context.Context) error { return a.h.Ops.Leave(ctx, a.waiter, a.id) }

// giveBack gives back what the acquisition may have been granted (core.Undo).
func (a *attempt) giveBack() {
	a.c.Undo(a.h.what(), a.id, a.lease, func(ctx context.Context, id string, life time.Duration) (int64, error) {
		return a.h.Ops.Release(ctx, a.owner, id, life)
	})
}
