package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/rwlock"
)

// rwlockGuard is run --rwlock NAME [-s]: the write side of the read-write
// lock NAME, or with -s its read side, shared with other readers (flock's
// -x and -s), with the watchdog lease.
type rwlockGuard struct {
	rw   *rwlock.RWLock
	side *rwlock.Side
	mode string // "read" or "write"
}

func newRWLockGuard(c *distsync.Client, name string, shared bool) (guard, error) {
	rw, err := c.RWLock(name)
	if err != nil {
		return nil, err
	}
	if shared {
		return rwlockGuard{rw, rw.Read(), "read"}, nil
	}
	return rwlockGuard{rw, rw.Write(), "write"}, nil
}

func (g rwlockGuard) acquire(ctx context.Context, wait time.Duration) (context.Context, []string, error) {
	var held context.Context
	var err error
	if wait < 0 {
		held, err = g.side.Lock(ctx)
	} else {
		held, err = g.side.TryLock(ctx, wait, 0)
	}
	if err != nil {
		return nil, nil, err
	}
	token, err := g.side.Token(held)
	if err != nil {
		g.side.Unlock(held)
		return nil, nil, err
	}
	return held, []string{envFencingToken + "=" + strconv.FormatInt(token, 10)}, nil
}

func (g rwlockGuard) release(held context.Context) error { return g.side.Unlock(held) }

func (g rwlockGuard) holds(held context.Context) (bool, error) {
	n, err := g.side.HoldCount(held)
	return n > 0, err
}

func (g rwlockGuard) kind() distsync.Kind { return distsync.KindRWLock }

func (g rwlockGuard) name() string { return g.rw.Name() }

func (g rwlockGuard) String() string { return fmt.Sprintf("%s lock %q", g.mode, g.rw.Name()) }
