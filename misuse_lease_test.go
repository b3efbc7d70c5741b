package distsync_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/multilock"
	"github.com/distsync/distsync/redlock"
)

// A lease under MinLease is refused as a misuse, not granted and refused as
// late (which looked like contention), for every primitive with an explicit
// lease and for Extend; MinLease itself holds on a local server.
func TestMinLease(t *testing.T) {
	t.Parallel()
	if distsync.MinLease != 10*time.Millisecond {
		t.Fatalf("MinLease %v: the documented minimum is 10ms", distsync.MinLease)
	}
	c := dstest.Client(t)
	ctx := context.Background()
	base := dstest.Name(t)
	too := []time.Duration{30, time.Millisecond, 2 * time.Millisecond, distsync.MinLease - 1}

	type extender interface {
		distsync.Locker
		Extend(ctx context.Context, lease time.Duration) error
	}
	m, _ := c.Mutex(base + "-mutex")
	f, _ := c.FairLock(base + "-fair")
	rw, _ := c.RWLock(base + "-rw")
	lockers := map[string]distsync.Locker{"mutex": m, "fairlock": f, "read": rw.Read(), "write": rw.Write()}
	m2, _ := c.Mutex(base + "-multi")
	ml, err := multilock.New(m2)
	must(t, err)
	lockers["multilock"] = ml
	var members []distsync.Locker
	for i := range 3 { // three keyspaces of one server stand for three masters
		mm, err := dstest.Client(t, func(o *distsync.Options) { o.DB = 1 + i }).Mutex(base + "-red")
		must(t, err)
		members = append(members, mm)
	}
	rl, err := redlock.New(members)
	must(t, err)
	lockers["redlock"] = rl
	_, err = redlock.New(members, redlock.WithWatchdogLease(time.Millisecond))
	if !errors.Is(err, distsync.ErrInvalidArgument) {
		t.Errorf("redlock.WithWatchdogLease(1ms): %v, want ErrInvalidArgument", err)
	}

	for kind, l := range lockers {
		for _, lease := range too {
			if _, err := l.TryLock(ctx, 0, lease); !errors.Is(err, distsync.ErrInvalidArgument) {
				t.Errorf("%s.TryLock(0, %v): %v, want ErrInvalidArgument", kind, lease, err)
			}
		}
		held, err := l.TryLock(ctx, time.Second, distsync.MinLease)
		if err != nil {
			t.Errorf("%s.TryLock(1s, MinLease): %v", kind, err)
		} else if err := l.Unlock(held); err != nil && !errors.Is(err, distsync.ErrNotHeld) {
			t.Errorf("%s.Unlock: %v", kind, err)
		}
		e, ok := l.(extender)
		if !ok {
			continue
		}
		held, err = l.TryLock(ctx, time.Second, time.Minute)
		must(t, err)
		for _, lease := range too {
			if err := e.Extend(held, lease); !errors.Is(err, distsync.ErrInvalidArgument) {
				t.Errorf("%s.Extend(%v): %v, want ErrInvalidArgument", kind, lease, err)
			}
		}
		must(t, e.Extend(held, distsync.MinLease))
		if err := l.Unlock(held); err != nil && !errors.Is(err, distsync.ErrNotHeld) { // 10 ms may have passed
			t.Errorf("%s.Unlock after Extend(MinLease): %v", kind, err)
		}
	}

	s, _ := c.PermitSemaphore(base + "-permits")
	_, err = s.TrySetPermits(ctx, 1)
	must(t, err)
	for _, lease := range too {
		if _, err := s.TryAcquire(ctx, 0, lease); !errors.Is(err, distsync.ErrInvalidArgument) {
			t.Errorf("permit TryAcquire(0, %v): %v, want ErrInvalidArgument", lease, err)
		}
	}
	p, err := s.TryAcquire(ctx, time.Second, distsync.MinLease)
	if err != nil {
		t.Errorf("permit TryAcquire(1s, MinLease): %v", err)
	} else if err := s.Release(ctx, p); err != nil && !errors.Is(err, distsync.ErrNotHeld) {
		t.Errorf("permit Release: %v", err)
	}
	p, err = s.TryAcquire(ctx, time.Second, time.Minute)
	must(t, err)
	for _, lease := range too {
		if err := p.Extend(ctx, lease); !errors.Is(err, distsync.ErrInvalidArgument) {
			t.Errorf("permit Extend(%v): %v, want ErrInvalidArgument", lease, err)
		}
	}
	must(t, p.Extend(ctx, distsync.MinLease))
	if err := s.Release(ctx, p); err != nil && !errors.Is(err, distsync.ErrNotHeld) { // 10 ms may have passed
		t.Errorf("permit Release after Extend(MinLease): %v", err)
	}
}
