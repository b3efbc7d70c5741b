package mutex_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/distsync/distsync"
)

// options points the examples at the test server; in a program it would be
// distsync.Options{Addrs: []string{"127.0.0.1:6379"}}.
var options distsync.Options

func ExampleMutex_Lock() {
	c, err := distsync.New(options)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	m, err := c.Mutex("example-report")
	if err != nil {
		panic(err)
	}

	ctx, err := m.Lock(context.Background())
	if err != nil {
		panic(err)
	}
	// Work under ctx: it is cancelled if the lock is lost.
	inner, err := m.Lock(ctx) // re-entry: same owner, hold count 2
	if err != nil {
		panic(err)
	}
	n, _ := m.HoldCount(inner)
	fmt.Println("hold count:", n)
	_ = m.Unlock(inner)
	_ = m.Unlock(ctx)
	locked, _ := m.IsLocked(context.Background())
	fmt.Println("locked after unlock:", locked)
	// Output:
	// hold count: 2
	// locked after unlock: false
}

func ExampleMutex_TryLock() {
	c, err := distsync.New(options)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	m, _ := c.Mutex("example-trylock")

	// Hold it for at most 10 s, without the watchdog.
	held, err := m.TryLock(context.Background(), 0, 10*time.Second)
	if err != nil {
		panic(err)
	}
	defer m.Unlock(held)

	// Another owner gives up after 50 ms.
	_, err = m.TryLock(context.Background(), 50*time.Millisecond, 0)
	fmt.Println(errors.Is(err, distsync.ErrNotAcquired))
	// Output: true
}

func ExampleMutex_Token() {
	c, err := distsync.New(options)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	m, _ := c.Mutex("example-token")

	var tokens []int64
	for range 2 {
		ctx, err := m.Lock(context.Background())
		if err != nil {
			panic(err)
		}
		tok, _ := m.Token(ctx) // pass it to the protected store with each write
		tokens = append(tokens, tok)
		_ = m.Unlock(ctx)
	}
	fmt.Println("second token is larger:", tokens[1] > tokens[0])
	// Output: second token is larger: true
}
