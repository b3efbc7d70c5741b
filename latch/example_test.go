package latch_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/distsync/distsync"
)

// options points the examples at the test server; in a program it would be
// distsync.Options{Addrs: []string{"127.0.0.1:6379"}}.
var options distsync.Options

func ExampleLatch() {
	c, err := distsync.New(options)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	ctx := context.Background()

	ready, err := c.Latch("example-workers-ready")
	if err != nil {
		panic(err)
	}
	if _, err := ready.TrySetCount(ctx, 3); err != nil {
		panic(err)
	}
	var wg sync.WaitGroup
	for range 3 { // workers, in this or other processes
		wg.Go(func() {
			if _, err := ready.CountDown(ctx); err != nil {
				panic(err)
			}
		})
	}
	if err := ready.Await(ctx); err != nil { // woken when the count reaches zero
		panic(err)
	}
	wg.Wait()
	n, _ := ready.Count(ctx)
	fmt.Println("all ready, count:", n)
	// Output:
	// all ready, count: 0
}
