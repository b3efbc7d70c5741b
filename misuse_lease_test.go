package distsync_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/redlock"
)

// A lease under MinLease is refused as a misuse, not granted and refused as
// late (which looked like contention): by a Redlock's watchdog lease and by
// the permit semaphore, TryAcquire and Extend; MinLease itself holds on a
// local server. (Every lock kind's TryLock and Extend are
// TestLockContract's misuse and extend.)
func TestMinLease(t *testing.T) {
	t.Parallel()
	if distsync.MinLease != 10*time.Millisecond {
		t.Fatalf("MinLease %v: the documented minimum is 10ms", distsync.MinLease)
	}
	c := dstest.Client(t)
	ctx := context.Background()
	base := dstest.Name(t)
	too := tooShort // as the lock kinds are refused

	m, err := c.Mutex(base + "-red")
	must(t, err)
	_, err = redlock.New([]distsync.Locker{m}, redlock.WithWatchdogLease(distsync.MinLease))
	must(t, err)
	_, err = redlock.New([]distsync.Locker{m}, redlock.WithWatchdogLease(time.Millisecond))
	if !errors.Is(err, distsync.ErrInvalidArgument) {
		t.Errorf("redlock.WithWatchdogLease(1ms): %v, want ErrInvalidArgument", err)
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
