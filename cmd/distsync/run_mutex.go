package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/mutex"
)

// lockGuard is run --lock: the mutex NAME, with the watchdog lease.
type lockGuard struct{ m *mutex.Mutex }

func newLockGuard(c *distsync.Client, name string) (guard, error) {
	m, err := c.Mutex(name)
	if err != nil {
		return nil, err
	}
	return lockGuard{m}, nil
}

func (g lockGuard) acquire(ctx context.Context, wait time.Duration) (context.Context, []string, error) {
	var held context.Context
	var err error
	if wait < 0 {
		held, err = g.m.Lock(ctx)
	} else {
		held, err = g.m.TryLock(ctx, wait, 0)
	}
	if err != nil {
		return nil, nil, err
	}
	token, err := g.m.Token(held)
	if err != nil {
		g.m.Unlock(held)
		return nil, nil, err
	}
	return held, []string{envFencingToken + "=" + strconv.FormatInt(token, 10)}, nil
}

func (g lockGuard) release(held context.Context) error { return g.m.Unlock(held) }

func (g lockGuard) holds(held context.Context) (bool, error) {
	n, err := g.m.HoldCount(held)
	return n > 0, err
}

func (g lockGuard) kind() distsync.Kind { return distsync.KindMutex }

func (g lockGuard) name() string { return g.m.Name() }

func (g lockGuard) String() string { return fmt.Sprintf("lock %q", g.m.Name()) }
