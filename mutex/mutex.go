// Package mutex is a reentrant distributed mutex on Redis, with Redisson's
// RLock semantics: a hash of owner -> hold count under one key, a lease
// renewed by the Client's watchdog, waiters woken by pub/sub, and a fencing
// token per hold.
//
// Ownership travels in the context: Lock returns a context that carries the
// owner, so locking again with it re-enters, and that is cancelled when the
// hold ends. Two goroutines that share a *Mutex but not a context contend,
// as with sync.Mutex. Run the work the lock protects under the returned
// context.
//
// # Holds and their contexts
//
// Each successful Lock, TryLock or ForceLock is an acquisition, with an id,
// a lease and a context of its own. The context ends when the acquisition
// does: with cause ErrReleased at Unlock, ErrLeaseLost when the lease is
// lost, ErrLeaseExpired when an explicit lease ends (a drift margin before
// the server's count ends; that is its Deadline), a cause wrapping ErrClosed
// at Client.Close, and when the context it was acquired on ends, in which
// case distsync releases the acquisition rather than renew a lock nobody can
// use: a deadline on that context bounds the hold, not only the wait. The
// watchdog renews a hold while one of its acquisitions has no explicit
// lease; when the last such is unlocked, the lease falls to the latest
// explicit lease left. Nothing ever touches another owner's hold, except
// ForceLock and ForceUnlock.
//
// # Lost requests and replies
//
// A transient failure (a dropped connection, a server restart or failover)
// does not end a wait: each attempt carries the acquisition's id, so a
// repeated one returns the grant an earlier one made instead of granting
// twice, and an attempt whose outcome stays unknown gives back what it may
// have granted. A release is exact and remembered by the server for 10 s:
// an Unlock retried after a lost reply returns nil if and only if that
// acquisition's release was applied (by either attempt), never releases
// another acquisition's count, and of concurrent Unlocks of one acquisition
// exactly one returns nil. docs/safety.md ("At the edges of a hold's life")
// says what holds in each case, and which deployment guarantees what.
//
// # Waiting and hand-off
//
// Waiters queue on the server in arrival order, and a release grants the
// lock directly to the oldest: a new hold with a fresh fencing token and a
// lease of at most a second (the hand-off lease) until its watchdog renews
// it, told with one PUBLISH to that waiter's Client: it holds when the
// message arrives, without another round trip, and a running owner never
// barges in ahead of the queue. A waiter that vanished keeps such a grant at
// most that second, and the waiter after it sleeps at most that second (the
// grant nudges it unless it would try again within that second by itself).
// See docs/how-it-works.md#waiting.
//
// # Round trips
//
// Uncontended, Lock, TryLock and Unlock are one round trip each; the first
// Lock or TryLock of a Client also starts, in the background, its
// subscription to the Client's control channel, where ForceLock tells a
// holder it was replaced (a hold replaced before that learns it at its next
// renewal). A re-entry is one round trip too: each acquisition has its own
// record on the server, which is what lets HoldID name it to any process.
//
// The errors it returns wrap those of package distsync (ErrNotHeld,
// ErrNotAcquired, ErrLeaseLost, ErrClosed, ...): test them with errors.Is.
package mutex

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"time"

	"github.com/distsync/distsync/internal/acquire"
	"github.com/distsync/distsync/internal/core"
)

var (
	//go:embed grant.lua
	grantLua string
	//go:embed mx.lua
	mxOnly string
	// mxLua is the mutex's helpers as the scripts but unlock have them,
	// after the shared library: the grant's (and core.FastLib, which it
	// needs) and mx.lua's.
	mxLua = core.FastLib + grantLua + mxOnly
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
	unlockScript  = core.NewFastScript(unlockFast+core.FastLib+grantLua+handoffLua, mxOnly+unlockLua)
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
	c    *core.Core
	name string
	key  string // the lock hash; the other keys are derived from it (core.SubKeys)
	ch   string // Channel, made once
}

// The suffixes of a mutex's other keys, after its key and ':'.
const (
	fence   = "fence"   // the fencing counter
	waiters = "waiters" // the waiters in arrival order (Q in mx.lua)
	entries = "waiting" // what each waiter waits for (E in mx.lua)
	done    = "done:"   // prefix of the acquisitions' finished marks
	channel = "ch"      // release notifications: this, ':', the waiter's Client id
)

// lock is what every mutex's acquisitions share.
var lock = acquire.Lock{Script: lockScript, Handoff: true, PerAcquisition: true}

// handle is a Mutex as acquire.Handle (and core.Holdable): what acquiring,
// holding and renewing need of it, out of the Mutex's API.
type handle Mutex

func (h *handle) Core() *core.Core     { return h.c }
func (h *handle) Key() string          { return h.key }
func (h *handle) What() string         { return (*Mutex)(h).what() }
func (h *handle) Name() string         { return h.name }
func (h *handle) Extra() []string      { return nil }
func (h *handle) Errorf(e error) error { return (*Mutex)(h).errorf(e) }

func (h *handle) Kind() (string, string) { return core.KindMutex, "" }

// Channel is where releases tell this Client's waiters: the mutex's
// channel, ':', the Client id.
func (h *handle) Channel() string { return h.ch }

// Keys are those of lock.lua for acquisition id.
func (h *handle) Keys(id string) []string {
	return core.SubKeys(h.key, "", fence, waiters, entries, done+id)
}

func (h *handle) Release(ctx context.Context, owner, id string, life time.Duration) (int64, error) {
	return (*Mutex)(h).release(ctx, owner, id, life)
}

// Leave removes waiter acquire.WaiterID(owner, id) and gives back what a
// release may have handed it.
func (h *handle) Leave(ctx context.Context, waiter, id string) error {
	owner := strings.TrimSuffix(waiter, ":"+id)
	_, err := (*Mutex)(h).run(ctx, owner, id, core.ReleaseMemory, true)
	return err
}

func (h *handle) Renewal(owner string) core.Renewal {
	return core.Renewal{Script: renewScript, Keys: []string{h.key}, Args: []string{owner, core.Ms(h.c.Lease)}}
}

// s is the Mutex's share of the lock-like primitives' methods.
func (m *Mutex) s() acquire.Surface {
	return acquire.Surface{Lock: &lock, H: (*handle)(core.OrZero(m))}
}

func init() {
	core.Register("mutex", func(c *core.Core, name string, _ []any) (any, error) { return newMutex(c, name) })
}

// newMutex returns the mutex called name on c (Client.Mutex).
func newMutex(c *core.Core, name string) (*Mutex, error) {
	if err := core.ValidateName(name); err != nil {
		return nil, err
	}
	key := c.Key(name, "")
	return &Mutex{c: c, name: name, key: key, ch: key + ":" + channel + ":" + c.ID}, nil
}

// Name returns the mutex's name.
func (m *Mutex) Name() string { return core.OrZero(m).name }

// Key returns the Redis key of the lock; keys of one mutex share its hash tag.
func (m *Mutex) Key() string { return core.OrZero(m).key }

// Lock blocks until the owner ctx carries (a new owner when it carries
// none) holds the lock, renewed by the watchdog until Unlock, or until ctx
// ends, when it returns ctx.Err() and leaves nothing held. Locking again
// with the returned context re-enters. The returned context carries the
// acquisition and ends with it, and it ends when ctx does: a deadline on ctx
// bounds the hold (TryLock bounds the wait alone). Transient failures do not
// end the wait. One round trip uncontended.
func (m *Mutex) Lock(ctx context.Context) (context.Context, error) {
	core.OrZero(m).c.WatchControl() // a ForceLock elsewhere ends the hold by push
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
	core.OrZero(m).c.WatchControl()
	return m.s().TryLock(ctx, wait, lease)
}

// Unlock releases one hold count of the acquisition ctx carries (pass the
// context Lock returned; its cancellation does not matter) and, when that
// frees the lock, wakes the oldest waiter. It returns nil if and only if the
// release was applied, by this call or by an earlier one whose reply was
// lost, and ErrNotHeld if the acquisition was not held (released, or its
// lease ended or was lost). Transient failures are retried for a few
// seconds, then returned: calling Unlock again learns the outcome. The
// acquisition's context has ended when it returns. One round trip.
func (m *Mutex) Unlock(ctx context.Context) error { return m.s().Unlock(ctx) }

// release runs the unlock script once for acquisition id of owner,
// remembering it for life: see core.ReleaseFunc.
func (m *Mutex) release(ctx context.Context, owner, id string, life time.Duration) (int64, error) {
	r, err := m.run(ctx, owner, id, life, false)
	if h := afterUnlock.Load(); h != nil && err == nil {
		err = (*h)()
	}
	return r, err
}

// run runs the unlock script for acquisition id of owner; leave also
// forgets owner as a waiter (a waiter giving up, which gives back a grant a
// release may have handed it).
func (m *Mutex) run(ctx context.Context, owner, id string, life time.Duration, leave bool) (int64, error) {
	l := "0"
	if leave {
		l = "1"
	}
	c := m.c
	starve, hl := c.Tuned(ctx)
	return c.Eval(ctx, unlockScript,
		core.SubKeys(m.key, "", waiters, entries, done+id, fence),
		[]string{owner, id, m.ch[:len(m.key)+1+len(channel)], c.PublishCmd(), core.Ms(life), msOrZero(starve), core.Ms(hl), core.Ms(c.FenceTTL), l, core.Ms(c.WaiterWindow)},
	).AsInt64()
}

// Extend moves the end of the explicit lease of the acquisition ctx carries
// (TryLock with lease > 0) to lease from now by the server's clock, and its
// context's Deadline with it (redsync's Extend), never shortening what
// another acquisition of the hold was promised. While it is on the wire the
// acquisition does not expire. It returns ErrNotHeld when the acquisition
// is no longer held (an ended lease is not revived), and ErrInvalidArgument
// for a lease under MinLease or a watchdog-renewed acquisition. One round trip.
func (m *Mutex) Extend(ctx context.Context, lease time.Duration) error {
	return m.s().Extend(ctx, lease)
}

// ForceUnlock deletes the lock whoever holds it and wakes the oldest waiter. It reports
// whether the lock was held. Holders in other processes learn of it at their
// next renewal, when their contexts are cancelled with ErrLeaseLost.
func (m *Mutex) ForceUnlock(ctx context.Context) (bool, error) {
	m = core.OrZero(m)
	if err := m.c.Closed(); err != nil {
		return false, m.errorf(err)
	}
	r, err := m.c.Eval(ctx, forceScript,
		core.SubKeys(m.key, "", waiters, entries, fence),
		[]string{m.key + ":" + channel, m.c.PublishCmd(), core.Ms(m.c.HandoffLease)},
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
	return m.s().Waiting(ctx, waitingScript, m.key+":"+entries)
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

func (m *Mutex) what() string { return fmt.Sprintf("mutex %q", m.name) }

func (m *Mutex) errorf(err error) error {
	return fmt.Errorf("mutex %q: %w", m.name, err)
}
