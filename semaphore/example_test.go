package semaphore_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/distsync/distsync"
)

// options points the examples at the test server; in a program it would be
// distsync.Options{Addrs: []string{"127.0.0.1:6379"}}.
var options distsync.Options

func ExampleSemaphore() {
	c, err := distsync.New(options)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	ctx := context.Background()

	conns, err := c.Semaphore("example-db-connections")
	if err != nil {
		panic(err)
	}
	defer conns.Delete(ctx)
	if _, err := conns.TrySetPermits(ctx, 3); err != nil {
		panic(err)
	}

	if err := conns.Acquire(ctx, 2); err != nil { // blocks until 2 are free
		panic(err)
	}
	left, _ := conns.Available(ctx)
	fmt.Println("available:", left)
	err = conns.TryAcquire(ctx, 2, 0) // one try
	fmt.Println("two more:", errors.Is(err, distsync.ErrNotAcquired))
	if err := conns.Release(ctx, 2); err != nil {
		panic(err)
	}
	left, _ = conns.Available(ctx)
	fmt.Println("available:", left)
	// Output:
	// available: 1
	// two more: true
	// available: 3
}

func ExamplePermitSemaphore() {
	c, err := distsync.New(options)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	ctx := context.Background()

	lot, err := c.PermitSemaphore("example-parking-lot")
	if err != nil {
		panic(err)
	}
	defer lot.Delete(ctx)
	if _, err := lot.TrySetPermits(ctx, 1); err != nil {
		panic(err)
	}

	// The watchdog renews the permit while this process lives; if it
	// crashes, the space comes back when the lease ends.
	space, err := lot.Acquire(ctx)
	if err != nil {
		panic(err)
	}
	_, err = lot.TryAcquire(ctx, 0, 0)
	fmt.Println("lot full:", errors.Is(err, distsync.ErrNotAcquired))
	// Work under space.Context(): it is cancelled if the permit is lost.
	fmt.Println("parked:", space.Context().Err() == nil)
	if err := lot.Release(ctx, space); err != nil {
		panic(err)
	}
	err = lot.Release(ctx, space)
	fmt.Println("released twice:", errors.Is(err, distsync.ErrNotHeld))
	free, _ := lot.Available(ctx)
	fmt.Println("free spaces:", free)
	// Output:
	// lot full: true
	// parked: true
	// released twice: true
	// free spaces: 1
}
