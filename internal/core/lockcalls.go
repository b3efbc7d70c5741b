package core

import (
	"context"
	"time"

	"github.com/distsync/distsync/observe"
)

// The calls of a lock by its key (acquire.Handle's, and the election's):
// what the locks that keep a hash of owner -> hold count under one key (the
// mutex, the fair lock) answer about themselves (LockExists, HoldCount,
// LockTTL, Token, Waiting), and the holder's Release and Extend of the
// acquisition its context carries. Each is one round trip, or
// none for Token and Release, and returns ErrClosed after Close (before any
// other error). Those that make a round trip refuse a key of another kind
// than kind (the marker the lock scripts keep in the hash) with
// ErrWrongKind.

// LockExists reports whether key exists: whether any owner holds the lock
// (one round trip).
func (c *Core) LockExists(ctx context.Context, key string, kind observe.Kind) (bool, error) {
	ms, err := c.lockPTTL(ctx, key, kind)
	return err == nil && ms != -2, err
}

var pttlScript = NewScript(`return redis.call('PTTL', KEYS[1])`)

// HoldCount returns the hold count of the owner ctx carries in the hash at
// key: its live acquisitions (0 when it holds none; one round trip). It works on a cancelled context, such
// as one whose hold was released.
func (c *Core) HoldCount(ctx context.Context, key string, kind observe.Kind) (int, error) {
	if err := c.Closed(); err != nil {
		return 0, err
	}
	owner, _ := c.OwnerOf(ctx) // "" holds nothing, but the kind is checked
	ictx, cancel := IOContext(ctx, ReleaseTimeout)
	defer cancel()
	n, err := c.EvalKind(ictx, holdCountScript, kind, key, []string{key}, []string{owner}).AsInt64()
	return int(n), err
}

// LockTTL returns the remaining lease of the lock at key (one round trip): 0
// when it is not held, -1 when it has no expiry (set by something other than
// distsync).
func (c *Core) LockTTL(ctx context.Context, key string, kind observe.Kind) (time.Duration, error) {
	ms, err := c.lockPTTL(ctx, key, kind)
	switch {
	case err != nil:
		return 0, err
	case ms == -2:
		return 0, nil
	case ms < 0:
		return -1, nil
	case ms == 0:
		// Less than a millisecond left, but held: never report a live lock
		// as free.
		return time.Millisecond, nil
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// lockPTTL is the PTTL of key, refusing a primitive of another kind: -2
// when key does not exist, -1 when it has no expiry.
func (c *Core) lockPTTL(ctx context.Context, key string, kind observe.Kind) (int64, error) {
	if err := c.Closed(); err != nil {
		return 0, err
	}
	return c.EvalKind(ctx, pttlScript, kind, key, []string{key}, nil).AsInt64()
}

// Token returns the fencing token of the hold of key that ctx carries, with
// no round trip; ErrNotHeld when ctx carries none or it was released.
func (c *Core) Token(ctx context.Context, key string) (int64, error) {
	if err := c.Closed(); err != nil {
		return 0, err
	}
	acq := c.Holds.Lookup(ctx, key)
	if acq == nil || !acq.Held() {
		return 0, ErrNotHeld
	}
	return acq.Token, nil
}

var holdCountScript = NewScript(`
-- The hold count of holder ARGV[1] in the hash KEYS[1]: its live
-- acquisitions. Changes nothing.
return #ds_ledger(KEYS[1], ARGV[1], ds_now_ms())
`)

// Release releases the acquisition of key that ctx carries (see Acq.Unlock);
// ErrNotHeld when ctx carries none.
func (c *Core) Release(ctx context.Context, key string) error {
	if err := c.Closed(); err != nil {
		return err
	}
	acq := c.Holds.Lookup(ctx, key)
	if acq == nil {
		return ErrNotHeld
	}
	return acq.Unlock(ctx)
}

var extendScript = NewScript(`
-- Move the end of the explicit lease of acquisition ARGV[2] of owner
-- ARGV[1] in the lock hash KEYS[1] (the mutex's and the fair lock's) to
-- ARGV[3] ms from now. The key lives as long as the longest promise left.
-- Reply: 1 moved, 2 a live acquisition the watchdog renews (unchanged),
-- 0 not a live acquisition of the owner.
local now = ds_now_ms()
local ok, watch, last = ds_reset(KEYS[1], ARGV[1], ARGV[2], now, ARGV[3])
if not ok then
  if watch then return 2 end
  return 0
end
if watch then
  ds_extend(KEYS[1], ARGV[3])
else
  redis.call('PEXPIRE', KEYS[1], ds_int(last - now))
end
return 1
`)

// Extend moves the end of the explicit lease of the acquisition of key that
// ctx carries to lease from now (one round trip), for the locks that keep a
// hash of owner -> hold count under key (the mutex, the fair lock): see
// Acq.Extend.
func (c *Core) Extend(ctx context.Context, key string, lease time.Duration) error {
	return c.ExtendWith(ctx, key, lease, func(ctx context.Context, owner, id string) (bool, error) {
		r, err := c.Eval(ctx, extendScript, []string{key}, []string{owner, id, Ms(lease)}).AsInt64()
		return r == 1, err
	})
}

// ExtendWith is Extend with the primitive's own script: send moves the end
// of acquisition id of owner on the server, reporting false when it is not
// held there.
func (c *Core) ExtendWith(ctx context.Context, key string, lease time.Duration, send func(ctx context.Context, owner, id string) (bool, error)) error {
	if err := c.Closed(); err != nil {
		return err
	}
	acq := c.Holds.Lookup(ctx, key)
	if acq == nil {
		return ErrNotHeld
	}
	owner := acq.hold.key.owner
	return acq.Extend(ctx, lease, func(ctx context.Context) (bool, error) { return send(ctx, owner, acq.ID) })
}

// Waiting returns how many waiters are registered at key whose window has
// not ended by the server's clock (one round trip; changes nothing): count
// is the script that counts them, WaiterSet for a waiter set (a sorted set
// of waiter -> end of its window), or a primitive's own for another layout.
// Waiters that vanished count until their window ends. A primitive of
// another kind than kind at hash is refused with ErrWrongKind.
func (c *Core) Waiting(ctx context.Context, count *Script, key string, kind observe.Kind, hash string) (int, error) {
	if err := c.Closed(); err != nil {
		return 0, err
	}
	n, err := c.EvalKind(ctx, count, kind, hash, []string{key}, nil).AsInt64()
	return int(n), err
}

// WaiterSet counts, for Waiting, the waiters of a waiter set whose window
// has not ended.
var WaiterSet = NewScript(`
-- How many waiters the waiter set KEYS[1] holds whose window has not ended
-- (changes nothing).
return redis.call('ZCOUNT', KEYS[1], '(' .. ds_int(ds_now_ms()), '+inf')
`)
