package distsync_test

import (
	"context"
	"testing"
	"time"

	"github.com/distsync/distsync/internal/dstest"
)

// The context of a permit with an explicit lease carries the lease's end as
// its Deadline (so drivers, gRPC and context.WithTimeout children see it), a
// little before the server's end; Extend moves it. (Every lock kind's
// holds are TestLockContract's explicit-lease and extend.)
func TestExplicitLeaseIsTheDeadline(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	s, _ := c.PermitSemaphore(dstest.Name(t) + "-permits")
	_, err := s.TrySetPermits(context.Background(), 1)
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
