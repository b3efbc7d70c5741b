// Package mutex is a reentrant distributed mutex on Redis, with Redisson's
// RLock semantics: a hash of owner -> hold count under one key, a lease
// renewed by the Client's watchdog, waiters woken by pub/sub, and a fencing
// token per hold.
//
// Waiting works like sync.Mutex across processes: waiters queue on the
// server in arrival order, a release wakes only the oldest (one wake-up per
// release, whatever the number of processes), a running owner may barge in
// while that waiter is young, and once it has waited too long releases hand
// the lock to it directly, so the longest wait stays bounded.
//
// Ownership travels in the context: Lock returns a context that carries the
// owner, so locking again with it re-enters, and that is cancelled when the
// lease is lost. Two goroutines that share a *Mutex but not a context contend,
// as with sync.Mutex.
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
	//go:embed mx.lua
	mxLua string
	//go:embed lockfast.lua
	lockFast string
	//go:embed lock.lua
	lockLua string
	//go:embed unlockfast.lua
	unlockFast string
	//go:embed unlock.lua
	unlockLua string
	//go:embed renew.lua
	renewLua string
	//go:embed forceunlock.lua
	forceLua string

	lockScript    = core.NewFastScript(lockFast, mxLua+lockLua)
	unlockScript  = core.NewFastScript(unlockFast, mxLua+unlockLua)
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
var lock = acquire.Lock{Script: lockScript, Handoff: true, PerAcquisition: true, Reenter: true}

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

// Lock blocks until the lock is held by the owner ctx carries (a new owner
// when ctx carries none), or ctx is done. The lease is the Client's watchdog
// lease, renewed until Unlock. Locking again with the returned context
// re-enters and adds a hold count.
//
// The returned context carries the owner and the acquisition, and ends when
// the acquisition does: with cause ErrReleased when Unlock releases it,
// ErrLeaseLost if the lease is lost, a cause wrapping ErrClosed at
// Client.Close, and when ctx ends. A hold and its context end together: when
// ctx is cancelled or its deadline passes, distsync releases the acquisition
// rather than renew a lock nobody can use, so a deadline on ctx bounds the
// hold, not only the wait (to bound the wait alone, use TryLock). If ctx ends
// before the grant comes back, Lock returns ctx.Err() and leaves nothing
// held. Run the work the lock protects under the returned context.
//
// A transient failure (a dropped connection, a server restart or failover)
// does not end the wait: the attempt is repeated, and a repeated attempt
// returns the grant an earlier one made instead of granting twice.
// Uncontended, Lock is one round trip (the first Lock or TryLock of a Client
// also subscribes to the Client's control channel, where a ForceLock tells
// a holder it was replaced: one more, once). A re-entry makes none when the owner
// holds the lock on this Client with the watchdog lease: it shares that
// acquisition's record on the server (and its token), which then lives,
// renewed, until the last acquisition sharing it is unlocked.
func (m *Mutex) Lock(ctx context.Context) (context.Context, error) {
	core.OrZero(m).c.WatchControl() // a ForceLock elsewhere ends the hold by push
	return m.s().Acquire(ctx, core.Forever, 0)
}

// TryLock is Lock with a wait budget and a lease. With wait 0 it tries once
// and returns ErrNotAcquired at once if another owner holds the lock; with
// wait > 0 it waits at most that long; with distsync.Forever it waits until
// ctx is done (a blocking lock with an explicit lease).
// With lease 0 the watchdog renews the lease until Unlock; with lease > 0
// the lock simply expires after lease, and the returned context ends then
// with cause ErrLeaseExpired (a little before the server's count ends, a
// margin for clock drift), which is its Deadline. With wait 0 a failed
// attempt is not repeated: its error is returned, and anything it may have
// granted is given back.
// Negative durations (but Forever) and a lease under distsync.MinLease
// return ErrInvalidArgument.
func (m *Mutex) TryLock(ctx context.Context, wait, lease time.Duration) (context.Context, error) {
	core.OrZero(m).c.WatchControl()
	return m.s().TryLock(ctx, wait, lease)
}

// Unlock releases the acquisition the context carries: pass the context
// Lock returned, whose cancellation does not matter. It releases one hold
// count of the owner; when it was the owner's last and nobody waits, the
// lock is deleted. When someone waits, one waiter across all processes is
// told, the oldest (one PUBLISH): if it has waited less than a millisecond
// (sync.Mutex's starvation threshold) the lock is deleted and it is woken to
// try, racing any running owner (barging, as with sync.Mutex); once it has
// waited longer the lock is granted to it directly, with a fresh fencing
// token and a lease of at most a second (the hand-off lease) until its
// watchdog renews it, and the message tells it that it holds, so it returns
// from Lock without another round trip. A waiter that vanished keeps such a
// grant at most that second; the message also bounds the sleep of the
// waiter after it by that second.
// When the owner still holds but no acquisition left is renewed by the
// watchdog, the lease falls to the latest explicit lease left. Unlock never
// touches another owner's hold.
//
// Whatever the outcome, the acquisition's context has ended when Unlock
// returns. Unlock returns nil if and only if the release was applied, by this
// call or by an earlier one whose reply was lost: a retry returns what the
// first attempt did and never releases another acquisition's count, and of
// concurrent calls for one acquisition exactly one returns nil. It returns
// ErrNotHeld when the acquisition was not held (released before, or its lease
// ended or was lost). Transient failures are retried for a few seconds; if no
// attempt got an answer, Unlock returns the error, the acquisition is no
// longer renewed, and calling Unlock again learns the outcome (the server
// remembers a release for 10 s). Unlock is one round trip, or none for an
// acquisition that shares its record on the server with another that is
// still held (a re-entry Lock made with no round trip, see Lock).
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
		[]string{owner, id, m.ch[:len(m.key)+1+len(channel)], c.PublishCmd(), core.Ms(life), msOrZero(starve), core.Ms(hl), core.Ms(c.FenceTTL), l},
	).AsInt64()
}

// Extend moves the end of the explicit lease of the acquisition ctx carries
// (a context TryLock returned with lease > 0) to lease from now by the
// server's clock, and the end of its context (its Deadline) with it: redsync's Extend,
// Redisson's expire on a held lock. The hold's lease is never shortened below
// what another of its acquisitions was promised. It returns ErrNotHeld when
// the acquisition is no longer held (an ended lease is not revived), and
// ErrInvalidArgument for a lease under MinLease or an acquisition the watchdog renews.
// While Extend is on the wire the acquisition does not expire: the server's
// answer decides, so client and server agree. One round trip.
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
