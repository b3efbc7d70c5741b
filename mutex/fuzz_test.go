package mutex_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
)

// FuzzMutex feeds arbitrary names and durations through the mutex's
// constructor and methods: every outcome is success or a typed error, never a
// panic, and nothing stays locked.
func FuzzMutex(f *testing.F) {
	f.Add("orders", int64(0), int64(0))
	f.Add("", int64(-1), int64(5))
	f.Add("a{b}", int64(time.Second), int64(-time.Second))
	f.Add("ünï/cødé:*?[x]", int64(time.Millisecond), int64(time.Hour))
	f.Add("x", int64(1), int64(1))
	c := dstest.Client(f)
	f.Fuzz(func(t *testing.T, name string, wait, lease int64) {
		m, err := c.Mutex(name)
		if err != nil {
			if !errors.Is(err, distsync.ErrInvalidName) {
				t.Fatalf("Mutex(%q): untyped error %v", name, err)
			}
			return
		}
		ctx := context.Background()
		// Keep real waits short; the sign and extremes are what matter.
		w := time.Duration(wait) % (50 * time.Millisecond)
		held, err := m.TryLock(ctx, w, time.Duration(lease))
		switch {
		case err == nil:
			if err := m.Unlock(held); err != nil && !errors.Is(err, distsync.ErrNotHeld) {
				t.Fatalf("Unlock: %v", err)
			}
		case errors.Is(err, distsync.ErrInvalidArgument), errors.Is(err, distsync.ErrNotAcquired):
		default:
			t.Fatalf("TryLock(%v, %v): untyped error %v", w, time.Duration(lease), err)
		}
		if _, err := m.TTL(ctx); err != nil {
			t.Fatalf("TTL: %v", err)
		}
		if _, err := m.HoldCount(ctx); err != nil {
			t.Fatalf("HoldCount: %v", err)
		}
		if _, err := m.ForceUnlock(ctx); err != nil {
			t.Fatalf("ForceUnlock: %v", err)
		}
	})
}
