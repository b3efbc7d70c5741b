package distsync_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/distsync/distsync"
)

// Wait for one lock by polling, on a Client whose other waits subscribe
// (Redisson's getSpinLock).
func ExampleWithSpin() {
	c, err := distsync.New(options)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	m, err := c.Mutex("example-spin")
	if err != nil {
		panic(err)
	}
	ctx := distsync.WithSpin(context.Background(), distsync.Spin{Min: time.Millisecond, Max: 50 * time.Millisecond})
	held, err := m.TryLock(ctx, time.Second, 0)
	if err != nil {
		panic(err)
	}
	defer m.Unlock(held)
	fmt.Println("held")
	// Output: held
}

// The context of a hold with an explicit lease ends with the lease: its
// Deadline says when, and Extend moves it.
func ExampleMinLease() {
	c, err := distsync.New(options)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	m, err := c.Mutex("example-deadline")
	if err != nil {
		panic(err)
	}
	if _, err := m.TryLock(context.Background(), 0, 30); err != nil { // 30 ns: a slip
		fmt.Println("30ns:", errors.Is(err, distsync.ErrInvalidArgument))
	}
	held, err := m.TryLock(context.Background(), 0, 2*time.Second)
	if err != nil {
		panic(err)
	}
	defer m.Unlock(held)
	d1, _ := held.Deadline()
	if err := m.Extend(held, time.Minute); err != nil {
		panic(err)
	}
	d2, _ := held.Deadline()
	fmt.Println("moved by Extend:", d2.Sub(d1) > 50*time.Second)
	// Output:
	// 30ns: true
	// moved by Extend: true
}
