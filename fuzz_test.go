package distsync_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
)

// FuzzPrimitives feeds arbitrary names, counts and durations through every
// constructor of the Client and the counting calls of each primitive: the
// outcome is success or a typed error, never a panic.
func FuzzPrimitives(f *testing.F) {
	f.Add("jobs", int64(3), int64(0))
	f.Add("", int64(0), int64(-1))
	f.Add("{x}", int64(-5), int64(time.Second))
	f.Add("x", int64(1<<53), int64(1))
	f.Add("y", int64(-1<<62), int64(1<<62))
	f.Add("z", int64(1<<53+1), int64(time.Millisecond))
	c := dstest.Client(f, func(o *distsync.Options) { o.Prefix = "fuzz:" })
	f.Fuzz(func(t *testing.T, name string, n, d int64) {
		ctx := context.Background()
		lease := time.Duration(d)
		typed := func(what string, err error, allowed ...error) {
			t.Helper()
			if err == nil {
				return
			}
			// One name serves every kind here: a kind finding another's
			// state is refused with ErrWrongKind.
			for _, a := range append(allowed, distsync.ErrWrongKind) {
				if errors.Is(err, a) {
					return
				}
			}
			t.Fatalf("%s(name %q, n %d, d %v): untyped error %v", what, name, n, lease, err)
		}
		named := func(what string, err error) bool {
			t.Helper()
			typed(what, err, distsync.ErrInvalidName)
			return err == nil
		}
		bad, busy := distsync.ErrInvalidArgument, distsync.ErrNotAcquired

		if s, err := c.Semaphore(name); named("Semaphore", err) {
			_, err = s.TrySetPermits(ctx, n)
			typed("TrySetPermits", err, bad)
			typed("AddPermits", s.AddPermits(ctx, n), bad)
			if err := s.TryAcquire(ctx, n, 0); err == nil {
				typed("Release", s.Release(ctx, n), bad)
			} else {
				typed("TryAcquire", err, bad, busy)
			}
			typed("Release", s.Release(ctx, n), bad)
			_, err = s.Delete(ctx)
			typed("Delete", err)
		}
		if s, err := c.PermitSemaphore(name); named("PermitSemaphore", err) {
			_, err = s.TrySetPermits(ctx, n)
			typed("TrySetPermits", err, bad)
			typed("SetPermits", s.SetPermits(ctx, n), bad)
			p, err := s.TryAcquire(ctx, 0, lease)
			if err == nil {
				typed("Release", s.Release(ctx, p), distsync.ErrNotHeld)
			} else {
				typed("TryAcquire", err, bad, busy)
			}
			_, err = s.Delete(ctx)
			typed("Delete", err)
		}
		if l, err := c.Latch(name); named("Latch", err) {
			_, err = l.TrySetCount(ctx, n)
			typed("TrySetCount", err, bad)
			_, err = l.CountDown(ctx)
			typed("CountDown", err)
			_, err = l.Delete(ctx)
			typed("Delete", err)
		}
		lockers := []distsync.Locker{}
		if m, err := c.Mutex(name); named("Mutex", err) {
			lockers = append(lockers, m)
		}
		if f, err := c.FairLock(name + "#fair"); named("FairLock", err) {
			lockers = append(lockers, f)
		}
		if rw, err := c.RWLock(name + "#rw"); named("RWLock", err) {
			lockers = append(lockers, rw.Read(), rw.Write())
		}
		for _, l := range lockers {
			held, err := l.TryLock(ctx, 0, lease)
			if err != nil {
				typed("TryLock", err, bad, busy)
				continue
			}
			typed("Unlock", l.Unlock(held), distsync.ErrNotHeld)
		}
	})
}
