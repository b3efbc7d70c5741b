package mutex_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/distsync/distsync"
)

// ForceLock takes a lock whoever holds it, with a larger fencing token; the
// replaced holder's context ends, by push.
func ExampleMutex_ForceLock() {
	old, err := distsync.New(options)
	if err != nil {
		panic(err)
	}
	defer old.Close()
	c, err := distsync.New(options)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	ctx := context.Background()
	stuck, _ := old.Mutex("example-force")
	held, err := stuck.Lock(ctx)
	if err != nil {
		panic(err)
	}
	before, _ := stuck.Token(held)

	m, _ := c.Mutex("example-force")
	took, err := m.ForceLock(ctx)
	if err != nil {
		panic(err)
	}
	defer m.Unlock(took)
	after, _ := m.Token(took)
	<-held.Done()
	fmt.Println("replaced holder told:", errors.Is(context.Cause(held), distsync.ErrLeaseLost))
	fmt.Println("larger token:", after > before)
	// Output:
	// replaced holder told: true
	// larger token: true
}

// A hold's ID lets another process release (or extend) exactly that
// acquisition.
func ExampleMutex_HoldID() {
	c, err := distsync.New(options)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	other, err := distsync.New(options) // another process, say
	if err != nil {
		panic(err)
	}
	defer other.Close()
	ctx := context.Background()
	m, _ := c.Mutex("example-hold-id")
	held, err := m.Lock(ctx)
	if err != nil {
		panic(err)
	}
	id, _ := m.HoldID(held) // hand it over: a string

	mo, _ := other.Mutex("example-hold-id")
	fmt.Println(mo.UnlockID(ctx, id))
	fmt.Println(errors.Is(mo.UnlockID(ctx, id), distsync.ErrNotHeld))
	locked, _ := mo.IsLocked(ctx)
	fmt.Println(locked)
	// Output:
	// <nil>
	// true
	// false
}
