package main

import (
	"context"
	"sync"
	"time"
)

// demoLatch: a coordinator awaits a latch of 3 while three services start up
// and count down; the last CountDown wakes it.
func demoLatch(ctx context.Context, d *demoEnv) error {
	const name, services = "services-ready", 3
	coord, err := d.a.Latch(name)
	if err != nil {
		return err
	}
	if _, err := coord.TrySetCount(ctx, services); err != nil {
		return err
	}
	d.t.say("main", "sets latch %q to %d and awaits it", name, services)
	var (
		mu   sync.Mutex
		last time.Time
	)
	errs := make(chan error, services)
	for i := range services {
		go func() {
			l, err := d.b.Latch(name)
			if err != nil {
				errs <- err
				return
			}
			if err := pause(ctx, time.Duration(i+1)*d.lease/10); err != nil { // starting up
				errs <- err
				return
			}
			mu.Lock()
			last = time.Now()
			mu.Unlock()
			n, err := l.CountDown(ctx)
			if err == nil {
				d.t.say("service "+string(rune('1'+i)), "is up: CountDown, %d to go", n)
			}
			errs <- err
		}()
	}
	if err := coord.Await(ctx); err != nil {
		return err
	}
	mu.Lock()
	d.t.say("main", "woken %s after the last CountDown: all services are up", ms(time.Since(last)))
	mu.Unlock()
	for range services {
		if err := <-errs; err != nil {
			return err
		}
	}
	return nil
}
