// Package rwlock is a reentrant distributed read-write lock on Redis, with
// Redisson's RReadWriteLock semantics and a few improvements: readers share
// the lock, a writer excludes everyone, and both are reentrant with a hold
// count per owner: a read lock is granted when no other owner holds the
// write lock, a write lock when no other owner holds the lock at all. The
// writer may also take the read lock (a downgrade); a
// reader asking for the write lock gets ErrUpgrade at once, where Redisson
// blocks forever. Each hold has its own lease, so a crashed reader's hold
// expires alone. The default is reader preference, as in Redisson: a stream
// of overlapping readers can keep a writer out indefinitely; with
// PreferWriters, new readers queue behind a waiting writer.
//
// Ownership travels in the context, as for the mutex: Lock returns a context
// that carries the owner (locking again with it re-enters) and that ends
// with the hold (ErrReleased, ErrLeaseLost, ErrLeaseExpired, ErrClosed) and
// when the context it was acquired on ends, which releases it. Run the work
// the lock protects under the returned context. Attempts are safe to repeat
// and a release is exact (docs/safety.md). Uncontended, Lock, TryLock and
// Unlock are one round trip each. Errors wrap package distsync's: test them
// with errors.Is.
//
// How it works: docs/how-it-works.md#the-read-write-lock.
package rwlock

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/distsync/distsync/internal/acquire"
	"github.com/distsync/distsync/internal/core"
	"github.com/distsync/distsync/observe"
)

var (
	//go:embed rw.lua
	rwLua string
	//go:embed read_lockfast.lua
	readLockFast string
	//go:embed read_lock.lua
	readLockLua string
	//go:embed write_lockfast.lua
	writeLockFast string
	//go:embed write_lock.lua
	writeLockLua string
	//go:embed read_unlockfast.lua
	readUnlockFast string
	//go:embed read_unlock.lua
	readUnlockLua string
	//go:embed write_unlockfast.lua
	writeUnlockFast string
	//go:embed write_unlock.lua
	writeUnlockLua string
	//go:embed renew.lua
	renewLua string
	//go:embed renew_full.lua
	renewFullLua string
	//go:embed forceunlock.lua
	forceLua string
	//go:embed state.lua
	stateLua string
	//go:embed leave.lua
	leaveLua string
	//go:embed extend.lua
	extendLua string

	readLockScript    = core.NewFastScript(core.FastLib+readLockFast, rwLua+readLockLua)
	writeLockScript   = core.NewFastScript(core.FastLib+writeLockFast, rwLua+writeLockLua)
	readUnlockScript  = core.NewFastScript(core.FastLib+readUnlockFast, rwLua+readUnlockLua)
	writeUnlockScript = core.NewFastScript(core.FastLib+writeUnlockFast, rwLua+writeUnlockLua)
	renewScript       = core.NewFastScript(renewLua, rwLua+renewFullLua)
	forceScript       = core.NewScript(rwLua + forceLua)
	stateScript       = core.NewScript(stateLua)
	leaveScript       = core.NewScript(rwLua + leaveLua)
	extendScript      = core.NewScript(rwLua + extendLua)
)

// Option configures a read-write lock handle.
type Option func(*RWLock)

// PreferWriters makes new readers of this handle queue behind waiting
// writers: once a writer waits, a reader that does not already hold the lock
// is refused until no writer waits. Readers re-entering and the writer
// taking the read lock are never held back (that would deadlock). Use the
// same setting on every handle of a name: it is the readers that defer. The
// default, reader preference, can starve writers (see the package doc).
func PreferWriters() Option {
	return func(rw *RWLock) {
		rw.prefer = true
		rw.read.h, rw.write.h = rw.read.describe(), rw.write.describe()
	}
}

// RWLock is a handle on one named read-write lock: Read and Write return its
// two lockers. It is cheap, holds no connection and is safe for concurrent
// use; all state lives in Redis and in the contexts its lockers return.
type RWLock struct {
	c       *core.Core
	name    string
	prefer  bool
	hash    string // H: the holds (see rw.lua)
	leases  string // L: each hold's lease
	fence   string // the fencing counter of the name's slot (core.Core.FenceKey)
	rwait   string // waiting readers
	wwait   string // waiting writers
	wqueue  string // waiting writers, oldest first
	channel string // the prefix of release notifications' channels (rw.lua's rw_hand)
	mine    string // this Client's: '<channel>:<client id>'
	read    Side
	write   Side
}

func init() {
	core.Register(observe.KindRWLock, newRWLock)
}

// newRWLock returns the read-write lock called name on c; Client.RWLock
// applies the options to it.
func newRWLock(c *core.Core, name string) (*RWLock, error) {
	if err := core.ValidateName(name); err != nil {
		return nil, err
	}
	rw := &RWLock{
		c:       c,
		name:    name,
		hash:    c.Key(name, ""),
		leases:  c.Key(name, "leases"),
		fence:   c.FenceKey(name),
		rwait:   c.Key(name, "rwaiters"),
		wwait:   c.Key(name, "wwaiters"),
		wqueue:  c.Key(name, "wqueue"),
		channel: c.Key(name, "ch"),
	}
	rw.mine = rw.channel + ":" + c.ID
	rw.read = Side{rw: rw, side: "r", key: rw.leases, waiters: rw.rwait}
	rw.write = Side{rw: rw, side: "w", key: rw.hash, waiters: rw.wwait}
	rw.read.h, rw.write.h = rw.read.describe(), rw.write.describe()
	return rw, nil
}

// Name returns the lock's name.
func (rw *RWLock) Name() string { return core.OrZero(rw).name }

// mark is the key of acquisition id's finished mark (ds_mark in lib.lua).
func (rw *RWLock) mark(id string) string { return rw.hash + ":done:" + id }

// PrefersWriters reports whether the handle was made with PreferWriters.
func (rw *RWLock) PrefersWriters() bool { return core.OrZero(rw).prefer }

// Read returns the read locker: shared with other readers, excluded by a writer.
func (rw *RWLock) Read() *Side { return &core.OrZero(rw).read }

// Write returns the write locker: exclusive.
func (rw *RWLock) Write() *Side { return &core.OrZero(rw).write }

// Side is one side of a read-write lock, the read or the write lock. Its
// methods are those of mutex.Mutex, and it satisfies distsync.Locker.
type Side struct {
	rw      *RWLock
	side    string // "r" or "w", the prefix of its holds in Redis
	key     string
	waiters string
	h       acquire.Handle
}

// Shared reports whether several owners may hold this side at once: true
// for the read side, false for the write side.
func (l *Side) Shared() bool { return l.ok().side == "r" }

// The kinds of acquisitions of the two sides.
var (
	codes     = map[int64]error{-1: core.ErrUpgrade}
	readLock  = acquire.Lock{Script: readLockScript, Codes: codes, Handoff: true, PerAcquisition: true, ModeInWaiter: true, SaysListens: true}
	writeLock = acquire.Lock{Script: writeLockScript, Codes: codes, Handoff: true, PerAcquisition: true, ModeInWaiter: true, SaysListens: true}
)

// handle is a Side as acquire.Ops (and its Handle's core.Holdable): what
// it does its own way when acquired, held and renewed, out of the Side's
// API.
type handle Side

func (h *handle) Keys(dst []string, id string) []string {
	rw := h.rw
	return append(dst, rw.hash, rw.leases, rw.fence, rw.rwait, rw.wwait, rw.mark(id), rw.wqueue)
}

// preference is the scripts' argument that says whether waiting writers go
// first: '1' when they do, else '0'.
func preference(prefer bool) string {
	if prefer {
		return "1"
	}
	return "0"
}

func (h *handle) Release(ctx context.Context, owner, id string, life time.Duration) (int64, error) {
	return (*Side)(h).release(ctx, owner, id, life)
}

func (h *handle) Leave(ctx context.Context, waiter, id string) error {
	return (*Side)(h).leave(ctx, waiter, id)
}

func (h *handle) Renewal(owner string) core.Renewal {
	rw := h.rw
	return core.Renewal{Script: renewScript, Keys: []string{rw.hash, rw.leases}, Args: []string{h.side + ":" + owner, core.Ms(rw.c.Lease)}}
}

// describe returns the Side as an acquire.Handle, made by newRWLock and
// again by PreferWriters.
func (l *Side) describe() acquire.Handle {
	rw := l.rw
	k := &readLock
	if l.side == "w" {
		k = &writeLock
	}
	// The lock scripts' last arguments: the writer preference and the
	// hand-off lease (a waiting writer's registration lasts that long
	// beyond its retry time).
	extra := []string{preference(rw.prefer), ""}
	if rw.c != nil {
		extra[1] = core.Ms(rw.c.HandoffLease)
	}
	return acquire.Handle{
		Lock: k, Core: rw.c, Kind: observe.KindRWLock, Name: rw.name, Key: l.key, Channel: rw.mine, Ops: (*handle)(l),
		Also: &acquire.Also{
			Side: l.sideName(), What: l.what(), ErrPrefix: fmt.Sprintf("rwlock %q (%s)", rw.name, l.sideName()),
			Hash: rw.hash, Extra: extra,
		},
	}
}

// s is the Side's Handle, whose methods are the lock-like primitives'
// share.
func (l *Side) s() *acquire.Handle {
	l = l.ok()
	return acquire.Made(&l.h, l.describe)
}

// Name returns the lock's name.
func (l *Side) Name() string { return l.ok().rw.name }

// Key returns the Redis key that stands for this side of the lock: the hold
// hash for the write lock and the lease set for the read lock. Both share the
// name's hash tag, and the write lock's key sorts first, so a multilock that
// takes both takes the write lock and then the read lock (a downgrade, which
// succeeds) rather than the other way round (an upgrade, refused).
func (l *Side) Key() string { return l.ok().key }

// Lock blocks until the owner ctx carries (a new owner when it carries
// none) holds this side of the lock, renewed by the watchdog until Unlock,
// or until ctx ends, when it returns ctx.Err() and leaves nothing held.
// Locking again with the returned context re-enters; a reader asking for
// the write lock gets ErrUpgrade at once. The returned context carries the
// acquisition and ends with it, and it ends when ctx does: a deadline on ctx
// bounds the hold (TryLock bounds the wait alone). Transient failures do not
// end the wait. One round trip uncontended.
func (l *Side) Lock(ctx context.Context) (context.Context, error) {
	return l.lock(ctx, core.Forever, 0)
}

// TryLock is Lock with a wait budget and a lease. With wait 0 it makes one
// attempt and returns ErrNotAcquired if it cannot acquire, or the attempt's
// error (giving back what it may have granted); with wait > 0 it waits at
// most that long, with distsync.Forever until ctx ends. With lease 0 the
// watchdog renews the lease until Unlock; with lease > 0 the lock expires
// after lease, when the returned context ends (its Deadline) with
// ErrLeaseExpired. Negative durations (but Forever) and a lease under
// distsync.MinLease return ErrInvalidArgument.
func (l *Side) TryLock(ctx context.Context, wait, lease time.Duration) (context.Context, error) {
	l = l.ok()
	if err := errors.Join(core.CheckDuration("wait", wait), core.CheckDuration("lease", lease)); err != nil {
		return ctx, l.errorf(err)
	}
	return l.lock(ctx, wait, lease)
}

func (l *Side) lock(in context.Context, wait, lease time.Duration) (context.Context, error) {
	l = l.ok()
	rw := l.rw
	ctx := in
	var downgrade context.CancelCauseFunc
	if base, ok := in.Value(writeBase{rw.hash}).(context.Context); ok && l.side == "r" {
		// ctx carries this lock's write hold: the read hold must outlive it
		// (a downgrade), so its context follows the one the write hold was
		// taken on, not the write hold's.
		ctx, downgrade = detach(in, base)
	}
	lctx, err := l.s().Acquire(ctx, wait, lease)
	if err != nil {
		if downgrade != nil {
			downgrade(nil)
		}
		return in, err
	}
	switch {
	case downgrade != nil:
		context.AfterFunc(lctx, func() { downgrade(context.Cause(lctx)) })
	case l.side == "w" && in.Value(writeBase{rw.hash}) == nil:
		lctx = context.WithValue(lctx, writeBase{rw.hash}, in)
	}
	return lctx, nil
}

// writeBase is the key of the context a write hold of the lock (its hash)
// was first taken on, kept in the write hold's context.
type writeBase struct{ hash string }

// detach returns a context with the values of ctx that is cancelled with
// base (and by the returned function), not with ctx: a read hold taken with
// a write hold's context that must not end with the write hold.
func detach(ctx, base context.Context) (context.Context, context.CancelCauseFunc) {
	d, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	stop := context.AfterFunc(base, func() { cancel(context.Cause(base)) })
	return d, func(cause error) {
		stop()
		cancel(cause)
	}
}

// Unlock releases one hold count of this side of the acquisition ctx
// carries (pass the context Lock returned; its cancellation does not
// matter), waking waiters as docs/how-it-works.md says. It returns nil if and
// only if the release was applied, by this call or by an earlier one whose
// reply was lost, and ErrNotHeld if the acquisition was not held (released,
// or its lease ended or was lost). Transient failures are retried for a few
// seconds, then returned: calling Unlock again learns the outcome. The
// acquisition's context ends before the release is sent. One round trip.
func (l *Side) Unlock(ctx context.Context) error { return l.s().Unlock(ctx) }

// release runs this side's release script once for acquisition id of
// owner, remembering it for life: see core.ReleaseFunc.
func (l *Side) release(ctx context.Context, owner, id string, life time.Duration) (int64, error) {
	rw, c := l.rw, l.rw.c
	hl := c.HandoffLease
	script := readUnlockScript
	if l.side == "w" {
		script = writeUnlockScript
	}
	return c.Eval(ctx, script,
		[]string{rw.hash, rw.leases, rw.rwait, rw.wwait, rw.mark(id), rw.fence, rw.wqueue},
		[]string{owner, id, rw.channel, c.PublishCmd(), core.Ms(life), core.Ms(hl), preference(rw.prefer)},
	).AsInt64()
}

// leave forgets a waiter of this side that gave up (waiting for
// acquisition id); a writer hands the lock on to the waiters it may have
// held back (leave.lua). Then it gives back what a release may have granted
// the waiter before it left (two round trips).
func (l *Side) leave(ctx context.Context, waiter, id string) error {
	rw, c := l.rw, l.rw.c
	err := c.Eval(ctx, leaveScript,
		[]string{rw.hash, rw.leases, rw.rwait, rw.wwait, rw.wqueue, rw.fence},
		[]string{l.side, waiter, rw.channel, c.PublishCmd(), core.Ms(c.HandoffLease), preference(rw.prefer)}).Error()
	if err != nil {
		return err
	}
	owner, _, _ := strings.Cut(waiter, ":"+id+":")
	_, err = l.release(ctx, owner, id, c.UndoLife(0))
	return err
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
func (l *Side) Extend(ctx context.Context, lease time.Duration) error {
	l = l.ok()
	rw, c := l.rw, l.rw.c
	err := c.ExtendWith(ctx, l.key, lease, func(ctx context.Context, owner, id string) (bool, error) {
		r, err := c.Eval(ctx, extendScript, []string{rw.hash, rw.leases}, []string{l.side + ":" + owner, id, core.Ms(lease)}).AsInt64()
		return r == 1, err
	})
	if err != nil {
		return l.errorf(err)
	}
	return nil
}

// ForceUnlock removes this side's holds whoever holds them (the write hold,
// or every read hold) and hands the lock on to the waiters, as a release
// does (docs/how-it-works.md). It reports whether any was
// held. The holders' contexts end with ErrLeaseLost, by push on their
// Clients' control channels, or, where push cannot reach them (a Client
// whose waiters spin), at their next renewal. One round trip.
func (l *Side) ForceUnlock(ctx context.Context) (bool, error) {
	l = l.ok()
	rw, c := l.rw, l.rw.c
	if err := c.Closed(); err != nil {
		return false, l.errorf(err)
	}
	n, err := c.Eval(ctx, forceScript,
		[]string{rw.hash, rw.leases, rw.rwait, rw.wwait, rw.wqueue, rw.fence},
		[]string{l.side, rw.channel, c.PublishCmd(), c.ControlPrefix(), core.Ms(c.HandoffLease), preference(rw.prefer)},
	).AsInt64()
	if err != nil {
		return false, l.errorf(err)
	}
	return n > 0, nil
}

// state returns how many owners hold this side, the hold count of the owner
// ctx carries, and the time until the side's last lease ends.
func (l *Side) state(ctx context.Context) (holders, count int, ttl time.Duration, err error) {
	l = l.ok()
	rw, c := l.rw, l.rw.c
	if err := c.Closed(); err != nil {
		return 0, 0, 0, l.errorf(err)
	}
	owner, _ := c.OwnerOf(ctx)
	ictx, cancel := core.IOContext(ctx, core.ReleaseTimeout)
	defer cancel()
	res, err := c.EvalKind(ictx, stateScript, observe.KindRWLock, rw.hash, []string{rw.hash, rw.leases}, []string{l.side, owner}).AsIntSlice()
	if err == nil && len(res) != 3 {
		err = fmt.Errorf("unexpected state reply %v", res)
	}
	if err != nil {
		return 0, 0, 0, l.errorf(err)
	}
	return int(res[0]), int(res[1]), time.Duration(res[2]) * time.Millisecond, nil
}

// IsLocked reports whether any owner holds this side: for the read locker,
// whether anyone reads; for the write locker, whether anyone writes. One
// round trip.
func (l *Side) IsLocked(ctx context.Context) (bool, error) {
	n, _, _, err := l.state(ctx)
	return n > 0, err
}

// Holders returns how many owners hold this side (at most 1 for the write
// lock). One round trip.
func (l *Side) Holders(ctx context.Context) (int, error) {
	n, _, _, err := l.state(ctx)
	return n, err
}

// Waiting returns how many waiters for this side are registered, not
// counting those whose window ended (one round trip). Waiters that vanished
// count until then.
func (l *Side) Waiting(ctx context.Context) (int, error) {
	return l.s().Waiting(ctx, core.WaiterSet, l.ok().waiters)
}

// HoldCount returns how many times the owner ctx carries holds this side
// (0 when it does not). Like Unlock it works on a cancelled context. One
// round trip.
func (l *Side) HoldCount(ctx context.Context) (int, error) {
	_, n, _, err := l.state(ctx)
	return n, err
}

// TTL returns the time until this side's last lease ends if nobody renews
// it: the writer's lease, or the longest reader lease. It is 0 when nobody
// holds this side. One round trip.
func (l *Side) TTL(ctx context.Context) (time.Duration, error) {
	_, _, ttl, err := l.state(ctx)
	return ttl, err
}

// Token returns the fencing token of the hold that ctx (a context Lock
// returned) carries. Tokens strictly increase with each new hold of the
// name, read or write, across owners and processes; a re-entry keeps the
// hold's token. Token makes no round trip; it returns ErrNotHeld if ctx
// carries no hold of this side (ErrClosed after Client.Close).
func (l *Side) Token(ctx context.Context) (int64, error) { return l.s().Token(ctx) }

// noSide stands for a Side no Client made (nil, or the zero value): its
// nil Core reports ErrNoClient.
var noSide = &Side{rw: &RWLock{}}

// ok returns l, or noSide when no Client made l.
func (l *Side) ok() *Side {
	if l == nil || l.rw == nil {
		return noSide
	}
	return l
}

func (l *Side) what() string { return fmt.Sprintf("%s lock %q", l.sideName(), l.rw.name) }

func (l *Side) errorf(err error) error { return l.s().Errorf(err) }

func (l *Side) sideName() string {
	if l.side == "w" {
		return observe.SideWrite
	}
	return observe.SideRead
}
