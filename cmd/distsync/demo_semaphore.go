package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/distsync/distsync/semaphore"
)

// demoParkingLot: a lot of 2 spaces is a permit semaphore; car 1 parks and
// crashes (its Client is gone, nobody releases), car 2 parks and leaves, car
// 3 waits: it gets car 2's space when car 2 leaves, and car 4 gets the
// crashed car's space when its lease ends, with nobody releasing it.
func demoParkingLot(ctx context.Context, d *demoEnv) error {
	const name, spaces = "parking-lot", 2
	admin, err := d.a.PermitSemaphore(name)
	if err != nil {
		return err
	}
	defer admin.Delete(context.Background())
	if _, err := admin.TrySetPermits(ctx, spaces); err != nil {
		return err
	}
	d.t.say("lot", "opens with %d spaces (TrySetPermits)", spaces)

	crashed, err := d.client() // car 1's process
	if err != nil {
		return err
	}
	s1, err := crashed.PermitSemaphore(name)
	if err != nil {
		return err
	}
	if _, err := s1.Acquire(ctx); err != nil {
		return err
	}
	d.t.say("car 1", "parks: %s", spacesLeft(ctx, admin))
	p2, err := admin.Acquire(ctx)
	if err != nil {
		return err
	}
	d.t.say("car 2", "parks: %s", spacesLeft(ctx, admin))
	crashed.Close()
	crashedAt := time.Now()
	d.t.say("car 1", "crashes: its process is gone and never releases its space")

	sb, err := d.b.PermitSemaphore(name)
	if err != nil {
		return err
	}
	type parked struct {
		who string
		p   *semaphore.Permit
		at  time.Time
		err error
	}
	got := make(chan parked, 2)
	for _, who := range []string{"car 3", "car 4"} {
		d.t.say(who, "arrives: the lot is full, waits")
		go func() {
			p, err := sb.Acquire(ctx)
			got <- parked{who, p, time.Now(), err}
		}()
	}
	if err := pause(ctx, d.lease/5); err != nil {
		return err
	}
	d.t.say("car 2", "leaves (Release)")
	if err := admin.Release(ctx, p2); err != nil {
		return err
	}
	var errAll error
	var permits []*semaphore.Permit
	for i := range 2 {
		g := <-got
		if g.err != nil {
			errAll = errors.Join(errAll, g.err)
			continue
		}
		permits = append(permits, g.p)
		if i == 0 {
			d.t.say(g.who, "parks in car 2's space: %s", spacesLeft(ctx, admin))
		} else {
			d.t.say(g.who, "parks in car 1's space %s after the crash, when its lease ended: %s",
				secs(g.at.Sub(crashedAt)), spacesLeft(ctx, admin))
		}
	}
	for _, p := range permits {
		errAll = errors.Join(errAll, sb.Release(ctx, p))
	}
	if errAll != nil {
		return errAll
	}
	d.t.note("a permit's lease is renewed by its Client's watchdog: a crashed holder's")
	d.t.note("permit comes back by itself within one lease (%s here).", secs(d.lease))
	return nil
}

func spacesLeft(ctx context.Context, s *semaphore.PermitSemaphore) string {
	n, err := s.Available(ctx)
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%d left", n)
}
