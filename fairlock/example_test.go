package fairlock_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/distsync/distsync"
)

// options points the examples at the test server; in a program it would be
// distsync.Options{Addrs: []string{"127.0.0.1:6379"}}.
var options distsync.Options

// Waiters get the lock in the order they queued for it, across processes.
func ExampleFairLock() {
	c, err := distsync.New(options)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	f, err := c.FairLock("example-fair")
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	held, err := f.Lock(ctx)
	if err != nil {
		panic(err)
	}

	var wg sync.WaitGroup
	var mu sync.Mutex
	var order []string
	for i, who := range []string{"first", "second", "third"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, err := f.Lock(ctx)
			if err != nil {
				panic(err)
			}
			mu.Lock()
			order = append(order, who)
			mu.Unlock()
			_ = f.Unlock(h) // wakes the next in line, and only it
		}()
		// Let it join the queue before the next one comes.
		for n, _ := f.Waiting(ctx); n <= i; n, _ = f.Waiting(ctx) {
			time.Sleep(time.Millisecond)
		}
	}
	_ = f.Unlock(held)
	wg.Wait()
	fmt.Println(order)
	// Output: [first second third]
}
