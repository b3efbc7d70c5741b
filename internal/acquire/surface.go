package acquire

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/distsync/distsync/internal/core"
)

// The methods the lock-like primitives share: the mutex, the fair lock and
// both sides of the read-write lock call them from their own (documented)
// methods, so that each primitive's folder holds only what differs: its
// scripts and its semantics.

// TryLock checks the durations (negative ones but a Forever wait are
// ErrInvalidArgument) and acquires (see Acquire).
func (h *Handle) TryLock(ctx context.Context, wait, lease time.Duration) (context.Context, error) {
	if err := errors.Join(core.CheckDuration("wait", wait), core.CheckDuration("lease", lease)); err != nil {
		return ctx, h.Errorf(err)
	}
	return h.Acquire(ctx, wait, lease)
}

// Acquire acquires for the owner ctx carries (a new one when it carries
// none), waiting at most wait (< 0: until ctx is done) and holding for
// lease (0: the watchdog lease, renewed): see attempt.hold. A grant refused
// because its reply came after its lease could have ended is given back,
// and a new acquisition tried within what is left of wait (as AgainIfLate
// does). It returns the acquisition's context; on error, ctx as it was
// given.
func (h *Handle) Acquire(in context.Context, wait, lease time.Duration) (context.Context, error) {
	c := h.Core
	if err := c.Closed(); err != nil {
		return in, h.Errorf(err)
	}
	ctx, oid := core.WithOwner(in)
	c.WatchControl() // a take-over from elsewhere ends the hold by push
	for l := newLate(wait); ; {
		a := &attempt{h: h, c: c, oid: oid, lease: lease}
		lctx, err := a.hold(ctx, l.left)
		if err == nil {
			return lctx, nil
		}
		if !l.again(ctx, err) {
			return in, h.Errorf(err)
		}
	}
}

// Unlock releases the acquisition ctx carries (core.Acq.Unlock).
func (h *Handle) Unlock(ctx context.Context) error {
	return h.wrap(h.Core.Release(ctx, h.Key))
}

// Token returns the fencing token of the acquisition ctx carries, with no
// round trip; ErrNotHeld when it carries none.
func (h *Handle) Token(ctx context.Context) (int64, error) {
	tok, err := h.Core.Token(ctx, h.Key)
	return tok, h.wrap(err)
}

// The calls below are those of the locks that keep a hash of owner -> hold
// count under their key (the mutex, the fair lock).

// IsLocked reports whether any owner holds the lock (one EXISTS).
func (h *Handle) IsLocked(ctx context.Context) (bool, error) {
	ok, err := h.Core.LockExists(ctx, h.Key, h.Kind)
	return ok, h.wrap(err)
}

// Holders returns how many owners hold the lock: 0 or 1 (one EXISTS).
func (h *Handle) Holders(ctx context.Context) (int, error) {
	ok, err := h.IsLocked(ctx)
	if ok {
		return 1, err
	}
	return 0, err
}

// HoldCount returns the hold count of the owner ctx carries.
func (h *Handle) HoldCount(ctx context.Context) (int, error) {
	n, err := h.Core.HoldCount(ctx, h.Key, h.Kind)
	return n, h.wrap(err)
}

// TTL returns the lock's remaining lease (0 when free, -1 when no expiry).
func (h *Handle) TTL(ctx context.Context) (time.Duration, error) {
	ttl, err := h.Core.LockTTL(ctx, h.Key, h.Kind)
	return ttl, h.wrap(err)
}

// Extend moves the end of the explicit lease of the acquisition ctx
// carries (core.Extend).
func (h *Handle) Extend(ctx context.Context, lease time.Duration) error {
	return h.wrap(h.Core.Extend(ctx, h.Key, lease))
}

// Waiting returns how many waiters are registered at key, not counting
// those whose window ended, as count counts them (core.Waiting; one round
// trip).
func (h *Handle) Waiting(ctx context.Context, count *core.Script, key string) (int, error) {
	hash := h.also().Hash
	if hash == "" {
		hash = h.Key
	}
	n, err := h.Core.Waiting(ctx, count, key, h.Kind, hash)
	return n, h.wrap(err)
}

// Errorf wraps err with the primitive and its name (ErrPrefix, or What).
func (h *Handle) Errorf(err error) error {
	if p := h.also().ErrPrefix; p != "" {
		return fmt.Errorf("%s: %w", p, err)
	}
	return fmt.Errorf("%s: %w", h.what(), err)
}

func (h *Handle) wrap(err error) error {
	if err != nil {
		return h.Errorf(err)
	}
	return nil
}
