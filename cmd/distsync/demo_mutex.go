package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/mutex"
)

// demoContention: A and B take turns on one mutex; each hand-over is woken
// by pub/sub, and the tour prints its latency: from the release call to the
// waiter holding the lock.
func demoContention(ctx context.Context, d *demoEnv) error {
	const name, rounds, work, rest = "door", 2, 300 * time.Millisecond, 50 * time.Millisecond
	ma, err := d.a.Mutex(name)
	if err != nil {
		return err
	}
	mb, err := d.b.Mutex(name)
	if err != nil {
		return err
	}
	var (
		mu         sync.Mutex
		releasedAt time.Time
		releasedBy string
		latencies  []time.Duration
	)
	// holding, when not nil, is closed once the worker first holds the lock.
	worker := func(who string, m *mutex.Mutex, holding chan struct{}) error {
		for i := range rounds {
			if i > 0 {
				if err := pause(ctx, rest); err != nil { // other work, so the peer gets its turn
					return err
				}
			}
			locked, _ := m.IsLocked(ctx)
			if locked {
				d.t.say(who, "wants %q: it is held, waits for a notification", name)
			}
			held, err := m.Lock(ctx)
			if err != nil {
				return err
			}
			now := time.Now()
			mu.Lock()
			if releasedBy != "" && releasedBy != who {
				lat := now.Sub(releasedAt)
				latencies = append(latencies, lat)
				d.t.say(who, "holds %q, woken %s after %s's release", name, ms(lat), releasedBy)
			} else {
				d.t.say(who, "holds %q", name)
			}
			mu.Unlock()
			if holding != nil && i == 0 {
				close(holding)
			}
			if err := pause(ctx, work); err != nil {
				m.Unlock(held)
				return err
			}
			d.t.say(who, "releases %q", name)
			mu.Lock()
			releasedAt, releasedBy = time.Now(), who
			mu.Unlock()
			if err := m.Unlock(held); err != nil {
				return err
			}
		}
		return nil
	}

	// A starts; B starts once A holds the lock, so the first hand-over is A's.
	aHolds := make(chan struct{})
	errs := make(chan error, 2)
	go func() {
		errs <- worker("A", ma, aHolds)
	}()
	select {
	case <-aHolds:
	case err := <-errs:
		return err
	}
	go func() { errs <- worker("B", mb, nil) }()
	err = errors.Join(<-errs, <-errs)
	if err != nil {
		return err
	}
	var parts []string
	for _, l := range latencies {
		parts = append(parts, ms(l))
	}
	d.t.note("hand-over latency %s: the release publishes, the waiter's", strings.Join(parts, ", "))
	d.t.note("subscription wakes it, it retries once; no polling.")
	return nil
}

// demoReentrancy: the owner a context carries may lock again; another owner
// may not; each Unlock releases one hold count.
func demoReentrancy(ctx context.Context, d *demoEnv) error {
	const name = "ledger"
	ma, err := d.a.Mutex(name)
	if err != nil {
		return err
	}
	mb, err := d.b.Mutex(name)
	if err != nil {
		return err
	}
	outer, err := ma.Lock(ctx)
	if err != nil {
		return err
	}
	n, _ := ma.HoldCount(outer)
	d.t.say("A", "Lock(ctx) on %q: held, hold count %d", name, n)
	inner, err := ma.Lock(outer)
	if err != nil {
		ma.Unlock(outer)
		return err
	}
	n, _ = ma.HoldCount(inner)
	d.t.say("A", "Lock(the context it got) again: re-entered, hold count %d", n)
	if _, err := mb.TryLock(ctx, 0, 0); errors.Is(err, distsync.ErrNotAcquired) {
		d.t.say("B", "TryLock(wait 0): refused at once (ErrNotAcquired)")
	} else if err != nil {
		return err
	} else {
		return fmt.Errorf("holder B got a lock A holds")
	}
	if err := ma.Unlock(inner); err != nil {
		return err
	}
	n, _ = ma.HoldCount(outer)
	locked, _ := ma.IsLocked(ctx)
	d.t.say("A", "Unlock(inner): hold count %d, locked %v", n, locked)
	if err := ma.Unlock(outer); err != nil {
		return err
	}
	locked, _ = ma.IsLocked(ctx)
	d.t.say("A", "Unlock(outer): locked %v; the key is gone", locked)
	return nil
}

// demoWatchdog: a lock taken without a lease gets the watchdog lease, and the
// Client's watchdog renews it every lease/3 for as long as it is held.
func demoWatchdog(ctx context.Context, d *demoEnv) error {
	const name = "nightly-report"
	ma, err := d.a.Mutex(name)
	if err != nil {
		return err
	}
	before := d.a.Stats().Renewals
	held, err := ma.Lock(ctx)
	if err != nil {
		return err
	}
	defer ma.Unlock(held)
	start := time.Now()
	ttl, _ := ma.TTL(ctx)
	d.t.say("A", "holds %q with the watchdog lease: TTL %s", name, secs(ttl))
	hold := 5 * d.lease / 2
	for step := d.lease / 2; time.Since(start) < hold; {
		if err := pause(ctx, step); err != nil {
			return err
		}
		ttl, err := ma.TTL(ctx)
		if err != nil {
			return err
		}
		renewals := d.a.Stats().Renewals - before
		d.t.say("A", "still working after %s: TTL %s (renewals so far: %d)", secs(time.Since(start)), secs(ttl), renewals)
	}
	if held.Err() != nil {
		return fmt.Errorf("lease lost: %w", context.Cause(held))
	}
	if err := ma.Unlock(held); err != nil {
		return err
	}
	d.t.say("A", "releases %q after %s, %.1f× its lease: the watchdog stops renewing it", name, secs(time.Since(start)), time.Since(start).Seconds()/d.lease.Seconds())
	return nil
}

// demoLostLease: an operator deletes a held lock (as "distsync unlock
// --force" does); B takes it at once, and A's context is cancelled at A's
// next renewal, when the watchdog finds the lease gone.
func demoLostLease(ctx context.Context, d *demoEnv) error {
	const name = "payments"
	ma, err := d.a.Mutex(name)
	if err != nil {
		return err
	}
	mb, err := d.b.Mutex(name)
	if err != nil {
		return err
	}
	held, err := ma.Lock(ctx)
	if err != nil {
		return err
	}
	defer ma.Unlock(held)
	d.t.say("A", "holds %q; works under the context Lock returned", name)
	if err := pause(ctx, d.lease/4); err != nil {
		return err
	}
	op, err := d.client()
	if err != nil {
		return err
	}
	mo, err := op.Mutex(name)
	if err != nil {
		return err
	}
	if _, err := mo.ForceUnlock(ctx); err != nil {
		return err
	}
	forced := time.Now()
	d.t.say("operator", "deletes %q (distsync unlock --force)", name)
	bHeld, err := mb.TryLock(ctx, 0, 0)
	if err != nil {
		return err
	}
	d.t.say("B", "takes %q at once", name)
	limit := time.NewTimer(2 * d.lease)
	defer limit.Stop()
	select {
	case <-held.Done():
	case <-limit.C:
		return fmt.Errorf("holder A's context was not cancelled within %v", 2*d.lease)
	case <-ctx.Done():
		return ctx.Err()
	}
	d.t.say("A", "context cancelled %s later: %v", secs(time.Since(forced)), context.Cause(held))
	d.t.note("A stops writing. For those %s both believed they held %q:", secs(time.Since(forced)), name)
	d.t.note("a holder learns of a loss at its next renewal (every lease/3),")
	d.t.note("which is why the protected resource should check fencing tokens.")
	if err := ma.Unlock(held); !errors.Is(err, distsync.ErrNotHeld) {
		return fmt.Errorf("holder A's Unlock after the loss: %v, want ErrNotHeld", err)
	}
	d.t.say("A", "Unlock: ErrNotHeld; it never touches B's lock")
	return mb.Unlock(bHeld)
}

// demoFencing: A takes a short explicit lease and stalls past it; B takes the
// lock with a larger token and writes; A's late write is refused by the
// storage, which remembers the largest token it has seen.
func demoFencing(ctx context.Context, d *demoEnv) error {
	const name = "invoice-42"
	lease := d.lease / 3
	ma, err := d.a.Mutex(name)
	if err != nil {
		return err
	}
	mb, err := d.b.Mutex(name)
	if err != nil {
		return err
	}
	var store fencedStore
	aHeld, err := ma.TryLock(ctx, 0, lease)
	if err != nil {
		return err
	}
	ta, _ := ma.Token(aHeld)
	d.t.say("A", "holds %q with an explicit %s lease (no watchdog), token %d", name, secs(lease), ta)
	d.t.say("A", "stalls (a GC pause, a slow disk) for %s", secs(2*lease))
	bWaits := time.Now()
	bHeld, err := mb.Lock(ctx) // woken when A's lease ends
	if err != nil {
		return err
	}
	tb, _ := mb.Token(bHeld)
	d.t.say("B", "holds %q after waiting %s for A's lease to end: token %d", name, secs(time.Since(bWaits)), tb)
	if err := store.write(tb, "total=120"); err != nil {
		return err
	}
	d.t.say("B", "writes total=120 with token %d: accepted", tb)
	if err := mb.Unlock(bHeld); err != nil {
		return err
	}
	if err := pause(ctx, time.Until(bWaits.Add(2*lease))); err != nil {
		return err
	}
	d.t.say("A", "resumes; its context says %v", context.Cause(aHeld))
	if err := store.write(ta, "total=100"); err != nil {
		d.t.say("A", "writes total=100 with token %d: refused, %v", ta, err)
	} else {
		return fmt.Errorf("the store accepted a stale token")
	}
	d.t.note("The store keeps %s: a paused holder cannot overwrite its successor.", store.value)
	return nil
}

// fencedStore stands for a resource that checks fencing tokens: it refuses a
// write whose token is smaller than one it has seen.
type fencedStore struct {
	mu      sync.Mutex
	highest int64
	value   string
}

func (s *fencedStore) write(token int64, v string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if token < s.highest {
		return fmt.Errorf("stale token %d < %d", token, s.highest)
	}
	s.highest, s.value = token, v
	return nil
}
