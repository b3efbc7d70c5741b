package distsync_test

import (
	"context"
	"testing"
	"time"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/multilock"
	"github.com/distsync/distsync/redlock"
)

// The context of an explicit-lease hold carries the lease's end as its
// Deadline (so drivers, gRPC and context.WithTimeout children see it), a
// little before the server's end; Extend moves it; a watchdog hold has no
// deadline of its own.
func TestExplicitLeaseIsTheDeadline(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	base := dstest.Name(t)
	m, _ := c.Mutex(base + "-mutex")
	f, _ := c.FairLock(base + "-fair")
	rw, _ := c.RWLock(base + "-rw")
	rw2, _ := c.RWLock(base + "-rw2")
	m2, _ := c.Mutex(base + "-multi")
	ml, err := multilock.New(m2)
	must(t, err)
	var members []distsync.Locker
	for i := range 3 {
		mm, err := dstest.Client(t, func(o *distsync.Options) { o.DB = 4 + i }).Mutex(base + "-red")
		must(t, err)
		members = append(members, mm)
	}
	rl, err := redlock.New(members)
	must(t, err)
	type extender interface {
		Extend(ctx context.Context, lease time.Duration) error
	}
	for kind, l := range map[string]distsync.Locker{"mutex": m, "fairlock": f, "read": rw.Read(), "write": rw2.Write(), "multilock": ml, "redlock": rl} {
		const lease = 20 * time.Second
		before := time.Now()
		held, err := l.TryLock(context.Background(), 0, lease)
		must(t, err)
		d, ok := held.Deadline()
		if !ok || d.After(before.Add(lease)) || d.Before(before.Add(lease-time.Second)) {
			t.Errorf("%s: Deadline() = %v, %v; want the lease's end, about %v", kind, d, ok, before.Add(lease))
		}
		child, cancel := context.WithTimeout(held, time.Hour)
		if cd, _ := child.Deadline(); !cd.Equal(d) {
			t.Errorf("%s: a WithTimeout child's deadline %v, want the hold's %v", kind, cd, d)
		}
		cancel()
		if e, ok := l.(extender); ok {
			before = time.Now()
			must(t, e.Extend(held, 2*lease))
			d, ok = held.Deadline()
			if !ok || d.Before(before.Add(2*lease-time.Second)) || d.After(time.Now().Add(2*lease)) {
				t.Errorf("%s: after Extend(%v), Deadline() = %v, %v; want about %v", kind, 2*lease, d, ok, before.Add(2*lease))
			}
		}
		must(t, l.Unlock(held))

		held, err = l.TryLock(context.Background(), distsync.Forever, 0)
		must(t, err)
		if d, ok := held.Deadline(); ok {
			t.Errorf("%s: a watchdog hold has a deadline, %v", kind, d)
		}
		must(t, l.Unlock(held))
	}

	s, _ := c.PermitSemaphore(base + "-permits")
	_, err = s.TrySetPermits(context.Background(), 1)
	must(t, err)
	before := time.Now()
	p, err := s.TryAcquire(context.Background(), 0, time.Minute)
	must(t, err)
	if d, ok := p.Context().Deadline(); !ok || d.After(before.Add(time.Minute)) || d.Before(before.Add(59*time.Second)) {
		t.Errorf("permit: Deadline() = %v, %v; want about %v", d, ok, before.Add(time.Minute))
	}
	before = time.Now()
	must(t, p.Extend(context.Background(), 2*time.Minute))
	if d, ok := p.Context().Deadline(); !ok || d.Before(before.Add(2*time.Minute-2*time.Second)) {
		t.Errorf("permit: after Extend, Deadline() = %v, %v", d, ok)
	}
	must(t, s.Release(context.Background(), p))
}
