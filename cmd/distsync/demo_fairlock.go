package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// demoFairLock: three waiters queue behind A in turn; each release wakes
// only the head of the queue, so they get the lock in arrival order.
func demoFairLock(ctx context.Context, d *demoEnv) error {
	const name = "ticket-desk"
	fa, err := d.a.FairLock(name)
	if err != nil {
		return err
	}
	held, err := fa.Lock(ctx)
	if err != nil {
		return err
	}
	d.t.say("A", "holds fair lock %q", name)
	fb, err := d.b.FairLock(name)
	if err != nil {
		fa.Unlock(held)
		return err
	}
	order := make(chan string, 3)
	errs := make(chan error, 3)
	for i, who := range []string{"B1", "B2", "B3"} {
		go func() {
			h, err := fb.Lock(ctx)
			if err != nil {
				errs <- err
				return
			}
			order <- who
			d.t.say(who, "holds %q", name)
			errs <- fb.Unlock(h)
		}()
		// The next one arrives once this one is queued.
		if err := waitFor(ctx, func() (bool, error) {
			n, err := fa.Waiting(ctx)
			return n == i+1, err
		}); err != nil {
			fa.Unlock(held)
			return err
		}
		d.t.say(who, "queues behind %s (position %d)", strings.Join([]string{"A", "B1", "B2"}[:i+1], ", "), i+1)
	}
	d.t.say("A", "releases %q: only the head of the queue is woken", name)
	if err := fa.Unlock(held); err != nil {
		return err
	}
	var got []string
	var errAll error
	for range 3 {
		errAll = errors.Join(errAll, <-errs)
	}
	close(order)
	for w := range order {
		got = append(got, w)
	}
	if errAll != nil {
		return errAll
	}
	if strings.Join(got, " ") != "B1 B2 B3" {
		return fmt.Errorf("granted in order %v", got)
	}
	d.t.note("granted in arrival order: %s", strings.Join(got, ", "))
	return nil
}

// waitFor checks cond every few milliseconds until it holds: the demo's way
// to let one actor arrive after another (not a wait for a lock).
func waitFor(ctx context.Context, cond func() (bool, error)) error {
	for {
		ok, err := cond()
		if err != nil || ok {
			return err
		}
		if err := pause(ctx, 2*time.Millisecond); err != nil {
			return err
		}
	}
}
