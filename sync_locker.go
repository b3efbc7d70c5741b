package distsync

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/distsync/distsync/internal/compose"
	"github.com/distsync/distsync/internal/core"
)

// SyncLocker returns a sync.Locker view of l, as etcd's
// concurrency.NewLocker, for code that takes a sync.Locker; it makes no I/O.
// l must exclude, as sync.Mutex does: a mutex, a fair lock, the write side of
// a read-write lock, or a multilock or Redlock of such. A nil l and a shared
// one (a read side, which two Locks would hold at once) return
// ErrInvalidArgument; a closed or nil Client returns ErrClosed or
// ErrInvalidArgument.
//
// Lock blocks until it holds l, with the watchdog lease and a new owner each
// time (not reentrant, like sync.Mutex). It never returns without the lock
// and has no error to return: failures are logged and retried, at most a
// second apart, except that once l's Client is closed Lock panics with an
// error wrapping ErrClosed (so does a Lock waiting when it closes): stop
// using the view before Close. Unlock releases the earliest unreleased
// Lock's hold; a failure, or an Unlock without a hold, is logged. A lost
// lease cannot be reported: code that must stop then uses TryLock's context.
func (c *Client) SyncLocker(l Locker) (sync.Locker, error) {
	switch {
	case compose.IsNil(l):
		return nil, fmt.Errorf("%w: SyncLocker of a nil Locker (%T)", ErrInvalidArgument, l)
	case compose.Shared(l):
		return nil, fmt.Errorf("%w: SyncLocker of %s, which several owners hold at once (a read side); a sync.Locker excludes", ErrInvalidArgument, l.Key())
	}
	if err := c.cc().Closed(); err != nil {
		return nil, fmt.Errorf("SyncLocker of %s: %w", l.Key(), err)
	}
	return &syncLocker{c: c, l: l}, nil
}

type syncLocker struct {
	c  *Client
	l  Locker
	mu sync.Mutex
	// held are the holds' contexts, oldest first: one, unless a hold whose
	// lease was lost is not unlocked yet while another Lock holds.
	held []context.Context
}

func (s *syncLocker) Lock() {
	var backoff core.Backoff
	for {
		ctx, err := s.l.TryLock(NewOwner(context.Background()), Forever, 0)
		if err == nil {
			s.mu.Lock()
			s.held = append(s.held, ctx)
			s.mu.Unlock()
			return
		}
		if errors.Is(err, ErrClosed) {
			// sync.Locker has no error, and Lock cannot hold: a loud end
			// rather than a goroutine that tries for ever.
			panic(fmt.Errorf("distsync: SyncLocker.Lock of %s after Client.Close: %w", s.l.Key(), err))
		}
		d := backoff.Next()
		s.log().Warn("distsync: SyncLocker: Lock failed, trying again", "lock", s.l.Key(), "err", err, "after", d)
		time.Sleep(d)
	}
}

func (s *syncLocker) Unlock() {
	s.mu.Lock()
	if len(s.held) == 0 {
		s.mu.Unlock()
		s.log().Warn("distsync: SyncLocker: Unlock of a lock not held by the view", "lock", s.l.Key())
		return
	}
	ctx := s.held[0]
	s.held = s.held[1:]
	s.mu.Unlock()
	if err := s.l.Unlock(ctx); err != nil {
		s.log().Warn("distsync: SyncLocker: Unlock failed", "lock", s.l.Key(), "err", err)
	}
}

// log is the Client's logger.
func (s *syncLocker) log() *slog.Logger {
	if l := s.c.cc().Log; l != nil {
		return l
	}
	return slog.Default()
}
