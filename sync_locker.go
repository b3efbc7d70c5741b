package distsync

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/distsync/distsync/internal/core"
)

// SyncLocker returns a sync.Locker view of l (any Locker), as etcd's
// concurrency.NewLocker; it makes no I/O, and a nil l returns nil. Its Lock
// blocks until it holds l, with the watchdog lease and a new owner each time
// (not reentrant, like sync.Mutex), and never panics or returns without the
// lock: failures are logged and retried, at most a second apart (after
// Client.Close, forever). Its Unlock releases the earliest unreleased Lock's
// hold; a failure, or an Unlock without a hold, is logged. A lost lease
// cannot be reported: code that must stop then uses TryLock's context.
func (c *Client) SyncLocker(l Locker) sync.Locker {
	if l == nil {
		return nil
	}
	return &syncLocker{c: c, l: l}
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

// log is the Client's logger (slog's default for a nil Client).
func (s *syncLocker) log() *slog.Logger {
	if c := s.c.cc(); c != nil && c.Log != nil {
		return c.Log
	}
	return slog.Default()
}
