package acquire

import (
	"context"
	"errors"
	"time"

	"github.com/distsync/distsync/internal/core"
)

// Surface is the method set the lock-like primitives share, around Acquire:
// the mutex, the fair lock and both sides of the read-write lock call it
// from their own (documented) methods, so that each primitive's folder holds
// only what differs: its scripts and its semantics.
//
// A Surface is two words: a primitive makes one per call rather than keep it.
type Surface struct {
	Lock *Lock
	H    Handle
}

// TryLock checks the durations (negative ones but a Forever wait are
// ErrInvalidArgument) and acquires (see Acquire).
func (s Surface) TryLock(ctx context.Context, wait, lease time.Duration) (context.Context, error) {
	if err := errors.Join(core.CheckDuration("wait", wait), core.CheckDuration("lease", lease)); err != nil {
		return ctx, s.H.Errorf(err)
	}
	return s.Acquire(ctx, wait, lease)
}

// Acquire acquires for the owner ctx carries (a new one when it carries
// none), waiting at most wait (< 0: until ctx is done) and holding for
// lease (0: the watchdog lease, renewed): see attempt.hold. A grant refused
// because its reply came after its lease could have ended is given back,
// and a new acquisition tried within what is left of wait (as AgainIfLate
// does). It returns the acquisition's context; on error, ctx as it was
// given.
func (s Surface) Acquire(in context.Context, wait, lease time.Duration) (context.Context, error) {
	c := s.H.Core()
	if err := c.Closed(); err != nil {
		return in, s.H.Errorf(err)
	}
	ctx, owner := c.Owner(in)
	c.WatchControl() // a take-over from elsewhere ends the hold by push
	for l := newLate(wait); ; {
		a := &attempt{l: s.Lock, h: s.H, c: c, owner: owner, lease: lease}
		lctx, err := a.hold(ctx, l.left)
		if err == nil {
			return lctx, nil
		}
		if !l.again(ctx, err) {
			return in, s.H.Errorf(err)
		}
	}
}

// Unlock releases the acquisition ctx carries (core.Acq.Unlock).
func (s Surface) Unlock(ctx context.Context) error {
	return s.wrap(s.H.Core().Release(ctx, s.H.Key()))
}

// Token returns the fencing token of the acquisition ctx carries, with no
// round trip; ErrNotHeld when it carries none.
func (s Surface) Token(ctx context.Context) (int64, error) {
	tok, err := s.H.Core().Token(ctx, s.H.Key())
	return tok, s.wrap(err)
}

// The calls below are those of the locks that keep a hash of owner -> hold
// count under their key (the mutex, the fair lock).

// IsLocked reports whether any owner holds the lock (one EXISTS).
func (s Surface) IsLocked(ctx context.Context) (bool, error) {
	ok, err := s.H.Core().LockExists(ctx, s.H.Key(), s.kind())
	return ok, s.wrap(err)
}

// Holders returns how many owners hold the lock: 0 or 1 (one EXISTS).
func (s Surface) Holders(ctx context.Context) (int, error) {
	ok, err := s.IsLocked(ctx)
	if ok {
		return 1, err
	}
	return 0, err
}

// HoldCount returns the hold count of the owner ctx carries.
func (s Surface) HoldCount(ctx context.Context) (int, error) {
	n, err := s.H.Core().HoldCount(ctx, s.H.Key(), s.kind())
	return n, s.wrap(err)
}

// TTL returns the lock's remaining lease (0 when free, -1 when no expiry).
func (s Surface) TTL(ctx context.Context) (time.Duration, error) {
	ttl, err := s.H.Core().LockTTL(ctx, s.H.Key(), s.kind())
	return ttl, s.wrap(err)
}

// Extend moves the end of the explicit lease of the acquisition ctx
// carries (core.Extend).
func (s Surface) Extend(ctx context.Context, lease time.Duration) error {
	return s.wrap(s.H.Core().Extend(ctx, s.H.Key(), lease))
}

// Waiting returns how many waiters are registered at key, not counting
// those whose window ended, as count counts them (core.Waiting; one round
// trip).
func (s Surface) Waiting(ctx context.Context, count *core.Script, key string) (int, error) {
	n, err := s.H.Core().Waiting(ctx, count, key, s.kind(), s.H.Keys("")[0])
	return n, s.wrap(err)
}

// kind is the handle's kind, the marker its hash keeps ('#k').
func (s Surface) kind() string {
	k, _ := s.H.Kind()
	return k
}

func (s Surface) wrap(err error) error {
	if err != nil {
		return s.H.Errorf(err)
	}
	return nil
}
