// Package mutex is a reentrant distributed mutex on Redis, with Redisson's
// RLock semantics and a fencing token per hold.
//
// Lock returns a context that carries the owner, so locking again with it
// re-enters; two goroutines that share a *Mutex but not a context contend,
// as with sync.Mutex. Each successful Lock, TryLock or ForceLock is an
// acquisition whose context ends with it: at Unlock (cause ErrReleased),
// when its lease is lost (ErrLeaseLost) or its explicit lease ends
// (ErrLeaseExpired, a drift margin before the server's: its Deadline), at
// Client.Close (ErrClosed), and when the context it was acquired on ends,
// which releases it: a deadline there bounds the hold, not only the wait.
// Run the protected work under it. A hold with no explicit lease is renewed
// by the Client's watchdog. Nothing touches another owner's hold but
// ForceLock, ForceUnlock and UnlockID, and each tells the replaced holder by
// push (docs/safety.md#hand-overs). Waiters queue in arrival order and a release
// wakes one of them. Uncontended, Lock, TryLock and Unlock are one round
// trip each. Attempts survive lost replies and Unlock is exact
// (docs/safety.md, "At the edges of a hold's life"). Errors wrap package
// distsync's (ErrNotHeld, ErrNotAcquired, ...): test them with errors.Is.
//
// How it works: docs/how-it-works.md#the-mutex.
package mutex

import (
	"context"
	_ "embed"
	"strings"
	"sync/atomic"
	"time"

	"github.com/distsync/distsync/internal/acquire"
	"github.com/distsync/distsync/internal/core"
	"github.com/distsync/distsync/observe"
)

var (
	//go:embed grant.lua
	grantLua string
	//go:embed mx.lua
	mxOnly string
	// mxLua is the mutex's helpers as the scripts but unlock have them,
	// after the shared library: the grant's (grant.lua, generated from
	// grant.in.lua with lib.lua's helpers inlined) and mx.lua's.
	mxLua = grantLua + mxOnly
	//go:embed lockfast.lua
	lockFast string
	//go:embed lock.lua
	lockLua string
	//go:embed unlockfast.lua
	unlockFast string
	//go:embed handoff.lua
	handoffLua string
	//go:embed unlock.lua
	unlockLua string
	//go:embed renew.lua
	renewLua string
	//go:embed forceunlock.lua
	forceLua string

	lockScript    = core.NewFastScript(lockFast, mxLua+lockLua)
	unlockScript  = core.NewFastScript(unlockFast+grantLua+handoffLua, mxOnly+unlockLua)
	renewScript   = core.NewFastScript(renewLua, "")
	forceScript   = core.NewScript(mxLua + forceLua)
	waitingScript = core.NewScript(`
-- The live waiters of a mutex: entries of E (mx.lua) whose end is to come.
-- KEYS[1] E  Reply: their number.
local now, n = ds_now_ms(), 0
local all = redis.call('HGETALL', KEYS[1])
for i = 2, #all, 2 do
  if tonumber(string.match(all[i], '^(%S+)')) > now then n = n + 1 end
end
return n
`)
)

// Mutex is a handle on one named lock. It is cheap, holds no connection, and
// is safe for concurrent use; all state lives in Redis and in the contexts
// Lock returns.
type Mutex struct {
	// h is the Mutex as the lock-like primitives' Handle, whose Core, Name,
	// Key (the lock hash; the other keys are derived from it: core.SubKeys)
	// and Channel (of this Client's waiters, made once) are the mutex's:
	// a held lock keeps its Mutex, once.
	h     acquire.Handle
	fence string // the fencing counter of the name's slot (core.Core.FenceKey)
}

// The suffixes of a mutex's other keys, after its key and ':'.
const (
	waiters = "waiters" // the waiters in arrival order (Q in mx.lua)
	entries = "waiting" // what each waiter waits for (E in mx.lua)
	done    = "done:"   // prefix of the acquisitions' finished marks
	channel = "ch"      // release notifications: this, ':', the waiter's Client id (the unlock script makes it from the key)
)

// lock is what every mutex's acquisitions share.
var lock = acquire.Lock{Script: lockScript, Handoff: true, PerAcquisition: true, JoinsWaiter: true, LastKeyWaits: true}

// handle is a Mutex as acquire.Ops (and its Handle's core.Holdable): what
// it does its own way when acquired, held and renewed, out of its API.
type handle Mutex

// Keys appends those of lock.lua for acquisition id to dst; the last, the
// waiters' entries, goes only with an attempt that waits (LastKeyWaits).
func (h *handle) Keys(dst []string, id string) []string {
	q, e, d := (*Mutex)(h).subKeys(id)
	return append(dst, h.h.Key, h.fence, q, d, e)
}

// subKeys returns the keys of the mutex's waiter queue, of its waiters'
// entries and of the finished mark of acquisition id: core.SubKeys's, in
// one allocation and fewer steps (every lock and unlock needs them).
func (m *Mutex) subKeys(id string) (q, e, d string) {
	k := m.h.Key
	var b strings.Builder
	b.Grow(3*len(k) + len(":"+waiters+":"+entries+":"+done) + len(id))
	b.WriteString(k)
	b.WriteString(":" + waiters)
	b.WriteString(k)
	b.WriteString(":" + entries)
	b.WriteString(k)
	b.WriteString(":" + done)
	b.WriteString(id)
	s := b.String()
	i := len(k) + len(":"+waiters)
	j := i + len(k) + len(":"+entries)
	return s[:i], s[i:j], s[j:]
}

func (h *handle) Release(ctx context.Context, owner, id string, life time.Duration) (int64, error) {
	return (*Mutex)(h).release(ctx, owner, id, life)
}

// Leave removes waiter '<owner>:<id>' and gives back what a
// release may have handed it.
func (h *handle) Leave(ctx context.Context, waiter, id string) error {
	owner := strings.TrimSuffix(waiter, ":"+id)
	_, err := (*Mutex)(h).run(ctx, owner, id, core.ReleaseMemory, true, "")
	return err
}

func (h *handle) Renewal(owner string) core.Renewal {
	return core.Renewal{Script: renewScript, Keys: []string{h.h.Key}, Args: []string{owner, core.Ms(h.h.Core.Lease)}}
}

// describe returns the Mutex as an acquire.Handle, made once (newMutex).
func (m *Mutex) describe() acquire.Handle {
	// Its name in logs and errors is the Handle's: `mutex "<name>"`.
	return acquire.Handle{
		Lock: &lock, Core: m.h.Core, Kind: observe.KindMutex, Name: m.h.Name,
		Key: m.h.Key, Channel: m.h.Channel, Ops: (*handle)(m),
	}
}

// s is the Mutex's Handle, whose methods are the lock-like primitives'
// share.
func (m *Mutex) s() *acquire.Handle {
	m = core.OrZero(m)
	return acquire.Made(&m.h, m.describe)
}

func init() {
	core.Register(observe.KindMutex, newMutex)
}

// newMutex returns the mutex called name on c (Client.Mutex).
func newMutex(c *core.Core, name string) (*Mutex, error) {
	if err := core.ValidateName(name); err != nil {
		return nil, err
	}
	ch, key := c.KeyWith(name, channel+":"+c.ID)
	m := &Mutex{h: acquire.Handle{Core: c, Name: name, Key: key, Channel: ch}, fence: c.FenceKey(name)}
	m.h = m.describe()
	return m, nil
}

// Name returns the mutex's name.
func (m *Mutex) Name() string { return core.OrZero(m).h.Name }

// Key returns the Redis key of the lock; keys of one mutex share its hash tag.
func (m *Mutex) Key() string { return core.OrZero(m).h.Key }

// Lock blocks until the owner ctx carries (a new owner when it carries
// none) holds the lock, renewed by the watchdog until Unlock, or until ctx
// ends, when it returns ctx.Err() and leaves nothing held. Locking again
// with the returned context re-enters. The returned context carries the
// acquisition and ends with it, and it ends when ctx does: a deadline on ctx
// bounds the hold (TryLock bounds the wait alone). Transient failures do not
// end the wait. One round trip uncontended.
func (m *Mutex) Lock(ctx context.Context) (context.Context, error) {
	return m.s().Acquire(ctx, core.Forever, 0)
}

// TryLock is Lock with a wait budget and a lease. With wait 0 it makes one
// attempt and returns ErrNotAcquired if another owner holds the lock, or the
// attempt's error (giving back what it may have granted); with wait > 0 it
// waits at most that long, with distsync.Forever until ctx ends. With lease
// 0 the watchdog renews the lease until Unlock; with lease > 0 the lock
// expires after lease, when the returned context ends (its Deadline) with
// ErrLeaseExpired. Negative durations (but Forever) and a lease under
// distsync.MinLease return ErrInvalidArgument.
func (m *Mutex) TryLock(ctx context.Context, wait, lease time.Duration) (context.Context, error) {
	return m.s().TryLock(ctx, wait, lease)
}

// Unlock releases one hold count of the acquisition ctx carries (pass the
// context Lock returned; its cancellation does not matter) and, when that
// frees the lock, wakes the oldest waiter. It returns nil if and only if its
// own release was applied, by this call or by an earlier one whose reply was
// lost, and ErrNotHeld if the acquisition was not held (released, by
// UnlockID elsewhere too, or its lease ended or was lost). Transient
// failures are retried for a few seconds, then returned: calling Unlock
// again learns the outcome. The acquisition's context ends before the
// release is sent. One round trip.
func (m *Mutex) Unlock(ctx context.Context) error { return m.s().Unlock(ctx) }

// release runs the unlock script once for acquisition id of owner,
// remembering it for life: see core.ReleaseFunc.
func (m *Mutex) release(ctx context.Context, owner, id string, life time.Duration) (int64, error) {
	return m.run(ctx, owner, id, life, false, "")
}

// run runs the unlock script for acquisition id of owner; leave also
// forgets owner as a waiter (a waiter giving up, which gives back a grant a
// release may have handed it). by is "" for the acquisition's own release,
// else the token of one release by id from elsewhere, whose holder is told
// on its Client's control channel (core.ReleaseID). The own release sends
// four arguments: each one more costs the server about 1% of a Lock and
// Unlock pair's work.
func (m *Mutex) run(ctx context.Context, owner, id string, life time.Duration, leave bool, by string) (int64, error) {
	c := m.h.Core
	q, e, d := m.subKeys(id)
	keys := []string{m.h.Key, q, e, d, m.fence}
	args := []string{owner, id, core.Ms(life), timing(c), by, ""}
	switch {
	case by != "":
		args[5] = c.ControlPrefix()
	case leave:
		args[4] = "l"
		args = args[:5]
	default:
		args = args[:4]
	}
	return c.Eval(ctx, unlockScript, keys, args).AsInt64()
}

// timing is the unlock script's ARGV[4] for c: '<starve ms> <hand-off
// lease ms> <waiters' window ms> <publish command>', one argument where
// four would each cost the server a Lua string on every release. The last
// one made is kept (Clients mostly share their settings).
func timing(c *core.Core) string {
	if p := lastTiming.Load(); p != nil && p.starve == c.StarveAfter && p.hl == c.HandoffLease && p.window == c.WaiterWindow && p.sharded == c.Sharded {
		return p.s // no allocation: t below is made only on a miss
	}
	t := &timings{c.StarveAfter, c.HandoffLease, c.WaiterWindow, c.Sharded, ""}
	t.s = msOrZero(t.starve) + " " + core.Ms(t.hl) + " " + core.Ms(t.window) + " " + c.PublishCmd()
	lastTiming.Store(t)
	return t.s
}

type timings struct {
	starve, hl, window time.Duration
	sharded            bool // PublishCmd's choice
	s                  string
}

var lastTiming atomic.Pointer[timings]

// Extend moves the end of the explicit lease of the acquisition ctx carries
// (TryLock with lease > 0) to lease from now by the server's clock, and its
// context's Deadline with it (redsync's Extend), never shortening what
// another acquisition of the hold was promised. Only an extension confirmed
// before the lease ends moves it: one confirmed later (its request or reply
// was slow) returns ErrNotHeld, the context having ended with the lease, and
// is given back. It returns ErrNotHeld when the acquisition is no longer
// held (an ended lease is not revived), and ErrInvalidArgument
// for a lease under MinLease or a watchdog-renewed acquisition. One round trip.
func (m *Mutex) Extend(ctx context.Context, lease time.Duration) error {
	return m.s().Extend(ctx, lease)
}

// ForceUnlock deletes the lock whoever holds it and wakes the oldest waiter. It reports
// whether the lock was held. The holder's context ends with ErrLeaseLost, by
// push on its Client's control channel, or, where push cannot reach it (a
// Client whose waiters spin), at its next renewal or when its explicit lease
// ends. One round trip.
func (m *Mutex) ForceUnlock(ctx context.Context) (bool, error) {
	m = core.OrZero(m)
	if err := m.h.Core.Closed(); err != nil {
		return false, m.errorf(err)
	}
	keys := core.SubKeys(m.h.Key, "", waiters, entries, "")
	keys[3] = m.fence
	r, err := m.h.Core.Eval(ctx, forceScript, keys,
		[]string{m.h.Key + ":" + channel, m.h.Core.PublishCmd(), core.Ms(m.h.Core.HandoffLease), m.h.Core.ControlPrefix()},
	).AsInt64()
	if err != nil {
		return false, m.errorf(err)
	}
	return r == 1, nil
}

// IsLocked reports whether any owner holds the lock (one EXISTS).
func (m *Mutex) IsLocked(ctx context.Context) (bool, error) { return m.s().IsLocked(ctx) }

// Holders returns how many owners hold the lock: 0 or 1 (one EXISTS).
func (m *Mutex) Holders(ctx context.Context) (int, error) { return m.s().Holders(ctx) }

// Waiting returns how many waiters are registered, not counting those whose
// window ended (one round trip). Waiters that vanished count until then.
func (m *Mutex) Waiting(ctx context.Context) (int, error) {
	m = core.OrZero(m)
	return m.s().Waiting(ctx, waitingScript, m.h.Key+":"+entries)
}

// HoldCount returns how many times the owner ctx carries holds the lock
// (0 when it does not; one HGET). Like Unlock it works on a cancelled
// context, such as one whose hold was released.
func (m *Mutex) HoldCount(ctx context.Context) (int, error) { return m.s().HoldCount(ctx) }

// TTL returns the lock's remaining lease; 0 when it is not held, -1 when it
// has no expiry (set by something other than distsync).
func (m *Mutex) TTL(ctx context.Context) (time.Duration, error) { return m.s().TTL(ctx) }

// Token returns the fencing token of the hold that ctx (a context Lock
// returned) carries. Tokens strictly increase with each new hold of a name,
// across owners and processes, also after the name was idle; a re-entry keeps
// the hold's token. Give it to the resource the lock protects so that it can
// refuse writes from a holder that lost the lock (a stale, smaller token).
// Token makes no round trip; it returns ErrNotHeld if ctx carries no hold
// (ErrClosed after Client.Close).
func (m *Mutex) Token(ctx context.Context) (int64, error) { return m.s().Token(ctx) }

// msOrZero is d in whole milliseconds, 0 included (core.Ms, at least 1).
func msOrZero(d time.Duration) string {
	if d < time.Millisecond {
		return "0"
	}
	return core.Ms(d)
}

func (m *Mutex) errorf(err error) error { return m.s().Errorf(err) }
