package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/semaphore"
)

// permitGuard is run --semaphore NAME --permits N: one permit of the
// permit-expiring semaphore NAME (its lease renewed by the watchdog), whose
// size is set to N when it has none; one of another size is refused (65).
type permitGuard struct {
	s       *semaphore.PermitSemaphore
	permits int64
	permit  *semaphore.Permit
}

func newSemaphoreGuard(c *distsync.Client, name string, permits int64) (guard, error) {
	s, err := c.PermitSemaphore(name)
	if err != nil {
		return nil, err
	}
	return &permitGuard{s: s, permits: permits}, nil
}

func (g *permitGuard) acquire(ctx context.Context, wait time.Duration) (context.Context, []string, error) {
	set, err := g.s.TrySetPermits(ctx, g.permits)
	if err != nil {
		return nil, nil, err
	}
	if !set {
		n, err := g.s.Permits(ctx)
		if err != nil {
			return nil, nil, err
		}
		if n != g.permits {
			return nil, nil, withCode(exitState, fmt.Errorf("semaphore %q has %d permits, not --permits %d: give --permits %d, or resize it with distsync delete --kind %s %s while nobody holds a permit",
				g.s.Name(), n, g.permits, n, distsync.KindPermitSemaphore, g.s.Name()))
		}
	}
	if wait < 0 {
		g.permit, err = g.s.Acquire(ctx)
	} else {
		g.permit, err = g.s.TryAcquire(ctx, wait, 0)
	}
	if err != nil {
		return nil, nil, err
	}
	return g.permit.Context(), []string{envPermitID + "=" + g.permit.ID()}, nil
}

func (g *permitGuard) release(context.Context) error {
	return g.s.Release(context.Background(), g.permit)
}

func (g *permitGuard) holds(context.Context) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := g.permit.TTL(ctx)
	if errors.Is(err, distsync.ErrNotHeld) {
		return false, nil
	}
	return err == nil, err
}

func (g *permitGuard) kind() distsync.Kind { return distsync.KindPermitSemaphore }

func (g *permitGuard) name() string { return g.s.Name() }

func (g *permitGuard) String() string { return fmt.Sprintf("a permit of semaphore %q", g.s.Name()) }
