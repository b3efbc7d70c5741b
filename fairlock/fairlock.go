// Package fairlock is a reentrant distributed lock on Redis that grants in
// strict arrival order across processes, with Redisson's RFairLock
// semantics and its known weaknesses fixed: a release grants the lock to the
// head of the queue directly (it holds when told, without another round
// trip), never wakes all waiters; a waiter that vanished while queued is
// dropped when its wait window (by the server's clock) ends, wherever it
// stands, so it cannot block the queue, and a head that vanished keeps a
// grant for the hand-off lease at most; a waiter that gives up leaves the
// queue at once (giving back a grant on its way); TryLock without a wait
// budget never queues.
//
// Holds are reentrant, renewed by the Client's watchdog and carry a fencing
// token, and ownership travels in the context, all as for the mutex: each
// successful Lock or TryLock is an acquisition whose context ends with the
// hold (ErrReleased, ErrLeaseLost, ErrLeaseExpired, ErrClosed) and when the
// context it was acquired on ends, which releases it. Run the work the lock
// protects under the returned context. Attempts are safe to repeat and a
// release is exact (docs/safety.md, "At the edges of a hold's life").
// Uncontended, Lock, TryLock and Unlock are one round trip each. Errors wrap
// package distsync's: test them with errors.Is.
//
// How it works: docs/how-it-works.md#the-fair-lock-and-the-election.
package fairlock

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/distsync/distsync/internal/acquire"
	"github.com/distsync/distsync/internal/core"
	"github.com/distsync/distsync/observe"
)

var (
	//go:embed lockfast.lua
	lockFast string
	//go:embed lock.lua
	lockLua string
	//go:embed unlockfast.lua
	unlockFast string
	//go:embed unlock.lua
	unlockLua string
	//go:embed leave.lua
	leaveLua string
	//go:embed renew.lua
	renewLua string
	//go:embed forceunlock.lua
	forceLua string
	//go:embed fl.lua
	flLua string
	//go:embed grant.lua
	grantLua string
	//go:embed handoff.lua
	handoffLua string

	lockScript = core.NewFastScript(core.FastLib+lockFast, core.QueueLib+lockLua)
	// The release's common cases run before the shared library, the grant
	// of the lock to the head of the queue among them (grant.lua, whose
	// fl_give the full path's fl_handon calls too).
	unlockScript = core.NewFastScript(core.FastLib+unlockFast+grantLua+handoffLua, core.QueueLib+flLua+unlockLua)
	leaveScript  = core.NewScript(core.QueueLib + grantLua + flLua + leaveLua)
	renewScript  = core.NewFastScript(renewLua, "")
	forceScript  = core.NewScript(core.QueueLib + forceLua)
)

// FairLock is a handle on one named fair lock. It is cheap, holds no
// connection and is safe for concurrent use; all state lives in Redis and in
// the contexts Lock returns.
type FairLock struct {
	c         *core.Core
	name      string
	key       string // the lock hash
	queue     string // waiter ids, head first
	deadlines string // waiter id -> end of its wait window
	fence     string // the fencing counter of the name's slot (core.Core.FenceKey)
	channel   string // wake-ups, addressed to one waiter, on channel:<client id> (fl.lua)
	h         acquire.Handle
}

// lock is what every fair lock's acquisitions share.
// A release grants the lock to the head of the queue directly, told on its
// Client's channel, and passes over a head whose Client listens no more
// (fl.lua).
var lock = acquire.Lock{Script: lockScript, Handoff: true, PerAcquisition: true, ModeInWaiter: true, SaysListens: true}

// handle is a FairLock as acquire.Ops (and its Handle's core.Holdable):
// what it does its own way when acquired, held and renewed, out of its API.
type handle FairLock

func (h *handle) Keys(dst []string, id string) []string {
	return append(dst, h.key, h.queue, h.deadlines, h.fence, (*FairLock)(h).mark(id))
}

func (h *handle) Release(ctx context.Context, owner, id string, life time.Duration) (int64, error) {
	return (*FairLock)(h).release(ctx, owner, id, life)
}

func (h *handle) Leave(ctx context.Context, waiter, id string) error {
	return (*FairLock)(h).leave(ctx, waiter, id)
}

func (h *handle) Renewal(owner string) core.Renewal {
	return core.Renewal{Script: renewScript, Keys: []string{h.key}, Args: []string{owner, core.Ms(h.c.Lease)}}
}

// describe returns the FairLock as an acquire.Handle, made once
// (newFairLock).
func (f *FairLock) describe() acquire.Handle {
	also := &acquire.Also{What: f.what(), ErrPrefix: fmt.Sprintf("fairlock %q", f.name)}
	var mine string // where this Client's waiters are told (fl.lua)
	if f.c != nil { // (a zero FairLock has no Client: its calls return ErrInvalidArgument)
		// An attempt that finds the lock lapsed wakes the head (lock.lua).
		also.Extra = []string{f.channel, f.c.PublishCmd(), f.handoff(context.Background())}
		mine = f.channel + ":" + f.c.ID
	}
	return acquire.Handle{
		Lock: &lock, Core: f.c, Kind: observe.KindFairLock, Name: f.name, Key: f.key, Channel: mine, Ops: (*handle)(f),
		Also: also,
	}
}

// s is the FairLock's Handle, whose methods are the lock-like primitives'
// share.
func (f *FairLock) s() *acquire.Handle {
	f = core.OrZero(f)
	return acquire.Made(&f.h, f.describe)
}

func init() {
	core.Register(observe.KindFairLock, newFairLock)
}

// newFairLock returns the fair lock called name on c (Client.FairLock).
func newFairLock(c *core.Core, name string) (*FairLock, error) {
	if err := core.ValidateName(name); err != nil {
		return nil, err
	}
	f := &FairLock{
		c:         c,
		name:      name,
		key:       c.Key(name, ""),
		queue:     c.Key(name, "queue"),
		deadlines: c.Key(name, "deadlines"),
		fence:     c.FenceKey(name),
		channel:   c.Key(name, "ch"),
	}
	f.h = f.describe()
	return f, nil
}

// Name returns the lock's name.
func (f *FairLock) Name() string { return core.OrZero(f).name }

// Key returns the Redis key of the lock; keys of one fair lock share its hash tag.
func (f *FairLock) Key() string { return core.OrZero(f).key }

// Lock blocks until the owner ctx carries (a new owner when it carries
// none) holds the lock, renewed by the watchdog until Unlock, or until ctx
// ends, when it returns ctx.Err() and leaves nothing held. Waiters are
// granted the lock in the order they queued; locking again with the
// returned context re-enters at once, whoever waits. The returned context
// carries the acquisition and ends with it, and it ends when ctx does: a
// deadline on ctx bounds the hold (TryLock bounds the wait alone). Transient
// failures do not end the wait. One round trip uncontended.
func (f *FairLock) Lock(ctx context.Context) (context.Context, error) {
	return f.s().Acquire(ctx, core.Forever, 0)
}

// TryLock is Lock with a wait budget and a lease. With wait 0 it makes one
// attempt, never queues, and returns ErrNotAcquired if the lock is held or
// others queue for it, or the attempt's error (giving back what it may have
// granted); with wait > 0 it queues at most that long (distsync.Forever:
// until ctx ends) and leaves the queue when it gives up. With lease 0 the
// watchdog renews the lease until Unlock; with lease > 0 the lock expires
// after lease, when the returned context ends (its Deadline) with
// ErrLeaseExpired. Bad durations return ErrInvalidArgument, as Mutex.TryLock's.
func (f *FairLock) TryLock(ctx context.Context, wait, lease time.Duration) (context.Context, error) {
	return f.s().TryLock(ctx, wait, lease)
}

// leave takes a waiter that gave up waiting for acquisition id out of the
// queue, and gives back a grant a release may have handed it.
func (f *FairLock) leave(ctx context.Context, waiter, id string) error {
	return f.c.Eval(ctx, leaveScript,
		[]string{f.key, f.queue, f.deadlines, f.mark(id), f.fence},
		[]string{waiter, f.channel, f.c.PublishCmd(), f.handoff(ctx), core.Ms(core.ReleaseMemory)}).Error()
}

// mark is the key of acquisition id's finished mark (ds_mark in lib.lua).
func (f *FairLock) mark(id string) string { return f.key + ":done:" + id }

// handoff is how long, in ms, a woken head of the queue keeps its place
// before the next waiter, nudged, may take it (core.Config.HandoffLease).
func (f *FairLock) handoff(context.Context) string {
	return core.Ms(f.c.HandoffLease)
}

// Unlock releases one hold count of the acquisition ctx carries (pass the
// context Lock returned; its cancellation does not matter) and, when that
// frees the lock, hands it to the head of the queue. It returns nil if and
// only if the release was applied, by this call or by an earlier one whose
// reply was lost, and ErrNotHeld if the acquisition was not held (released,
// or its lease ended or was lost). Transient failures are retried for a few
// seconds, then returned: calling Unlock again learns the outcome. The
// acquisition's context ends before the release is sent. One round trip.
func (f *FairLock) Unlock(ctx context.Context) error { return f.s().Unlock(ctx) }

// release runs the unlock script once for acquisition id of owner,
// remembering it for life: see core.ReleaseFunc.
func (f *FairLock) release(ctx context.Context, owner, id string, life time.Duration) (int64, error) {
	return f.c.Eval(ctx, unlockScript,
		[]string{f.key, f.queue, f.deadlines, f.mark(id), f.fence},
		[]string{owner, id, f.channel, f.c.PublishCmd(), core.Ms(life), f.handoff(ctx)},
	).AsInt64()
}

// Extend moves the end of the explicit lease of the acquisition ctx carries
// (TryLock with lease > 0) to lease from now by the server's clock, and its
// context's Deadline with it (redsync's Extend), never shortening what
// another acquisition of the hold was promised. Only an extension confirmed
// before the lease ends moves it: one confirmed later (its request or reply
// was slow) returns ErrNotHeld, the context having ended with the lease, and
// is given back. It returns ErrNotHeld when the acquisition is no longer
// held (an ended lease is not revived), and ErrInvalidArgument
// for a lease under MinLease or a watchdog-renewed acquisition. One round trip.
func (f *FairLock) Extend(ctx context.Context, lease time.Duration) error {
	return f.s().Extend(ctx, lease)
}

// ForceUnlock deletes the lock whoever holds it and wakes the head of the
// queue. It reports whether the lock was held. The holder's context ends
// with ErrLeaseLost, by push on its Client's control channel, or, where push
// cannot reach it (a Client whose waiters spin), at its next renewal.
func (f *FairLock) ForceUnlock(ctx context.Context) (bool, error) {
	f = core.OrZero(f)
	if err := f.c.Closed(); err != nil {
		return false, f.errorf(err)
	}
	r, err := f.c.Eval(ctx, forceScript,
		[]string{f.key, f.queue, f.deadlines},
		[]string{f.channel, f.c.PublishCmd(), f.handoff(ctx), f.c.ControlPrefix()},
	).AsInt64()
	if err != nil {
		return false, f.errorf(err)
	}
	return r == 1, nil
}

// IsLocked reports whether any owner holds the lock (one EXISTS).
func (f *FairLock) IsLocked(ctx context.Context) (bool, error) { return f.s().IsLocked(ctx) }

// Holders returns how many owners hold the lock: 0 or 1 (one EXISTS).
func (f *FairLock) Holders(ctx context.Context) (int, error) { return f.s().Holders(ctx) }

// Waiting returns how many waiters are queued, not counting those whose
// window ended (one round trip). Waiters that vanished count until then.
func (f *FairLock) Waiting(ctx context.Context) (int, error) {
	return f.s().Waiting(ctx, core.WaiterSet, core.OrZero(f).deadlines)
}

// HoldCount returns how many times the owner ctx carries holds the lock
// (0 when it does not; one HGET). Like Unlock it works on a cancelled
// context.
func (f *FairLock) HoldCount(ctx context.Context) (int, error) { return f.s().HoldCount(ctx) }

// TTL returns the lock's remaining lease; 0 when it is not held, -1 when it
// has no expiry (set by something other than distsync).
func (f *FairLock) TTL(ctx context.Context) (time.Duration, error) { return f.s().TTL(ctx) }

// Token returns the fencing token of the hold that ctx (a context Lock
// returned) carries. Tokens strictly increase with each new hold of a name,
// across owners and processes; a re-entry keeps the hold's token. Token
// makes no round trip; it returns ErrNotHeld if ctx carries no hold
// (ErrClosed after Client.Close).
func (f *FairLock) Token(ctx context.Context) (int64, error) { return f.s().Token(ctx) }

func (f *FairLock) what() string { return fmt.Sprintf("fair lock %q", f.name) }

func (f *FairLock) errorf(err error) error { return f.s().Errorf(err) }
