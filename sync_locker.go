package distsync

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/distsync/distsync/internal/core"
)

// SyncLocker returns a sync.Locker view of l (a Mutex, a FairLock, an
// RWLock's Write side, any Locker), for code that takes one, as etcd's
// concurrency.NewLocker. It makes no I/O. A nil l returns nil.
//
// Lock blocks until it holds l, with an owner of its own each time: like
// sync.Mutex it is not reentrant (a second Lock blocks until an Unlock),
// and goroutines that share the view exclude one another. The lease is the
// watchdog lease, renewed until Unlock. Lock never panics and never returns
// without holding the lock: a transient failure is repeated (as Lock's
// are), and any other (another kind's name, ErrNotReplicated, a Client
// closed) is logged through the Client's logger and tried again after a
// back-off of at most a second. So after Client.Close, a Lock blocks until
// the process ends: close the Client once nothing takes the view any more.
//
// Unlock releases the hold the earliest Lock not yet unlocked took. It never
// panics: a failure is logged (the lease then ends by itself), and an
// Unlock without a hold is logged and ignored.
//
// sync.Locker has no way to report a lost lease: code that must stop when it
// loses the lock uses the context TryLock returns instead.
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
