package core

import (
	"context"
	"time"
)

// What the locks that keep a hash of owner -> hold count under one key (the
// mutex, the fair lock) answer about themselves. Each is one round trip, or
// none for Token, and returns ErrClosed after Close.

// LockExists reports whether key exists: whether any owner holds the lock
// (one EXISTS).
func (c *Core) LockExists(ctx context.Context, key string) (bool, error) {
	if err := c.Closed(); err != nil {
		return false, err
	}
	n, err := c.Client.Do(ctx, c.Client.B().Exists().Key(key).Build()).AsInt64()
	return n == 1, err
}

// HoldCount returns the hold count of the owner ctx carries in the hash at
// key: its live acquisitions (0 when it holds none; one round trip). It works on a cancelled context, such
// as one whose hold was released.
func (c *Core) HoldCount(ctx context.Context, key string) (int, error) {
	if err := c.Closed(); err != nil {
		return 0, err
	}
	owner, ok := c.OwnerOf(ctx)
	if !ok {
		return 0, nil
	}
	ictx, cancel := IOContext(ctx, ReleaseTimeout)
	defer cancel()
	n, err := c.Eval(ictx, holdCountScript, []string{key}, []string{owner}).AsInt64()
	return int(n), err
}

// LockTTL returns the remaining lease of the lock at key (one PTTL): 0 when
// it is not held, -1 when it has no expiry (set by something other than
// distsync).
func (c *Core) LockTTL(ctx context.Context, key string) (time.Duration, error) {
	if err := c.Closed(); err != nil {
		return 0, err
	}
	ms, err := c.Client.Do(ctx, c.Client.B().Pttl().Key(key).Build()).AsInt64()
	switch {
	case err != nil:
		return 0, err
	case ms == -2:
		return 0, nil
	case ms < 0:
		return -1, nil
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// Token returns the fencing token of the hold of key that ctx carries, with
// no round trip; ErrNotHeld when ctx carries none or it was released.
func (c *Core) Token(ctx context.Context, key string) (int64, error) {
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
	acq := c.Holds.Lookup(ctx, key)
	if acq == nil {
		return ErrNotHeld
	}
	return acq.Unlock(ctx)
}
