package rwlock_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/rwlock"
)

// options points the examples at the test server; in a program it would be
// distsync.Options{Addrs: []string{"127.0.0.1:6379"}}.
var options distsync.Options

// Readers share the lock; a writer excludes them.
func ExampleRWLock() {
	c, err := distsync.New(options)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	rw, err := c.RWLock("example-config")
	if err != nil {
		panic(err)
	}
	ctx := context.Background()

	r1, _ := rw.Read().Lock(ctx) // two owners read at once
	r2, _ := rw.Read().Lock(ctx)
	n, _ := rw.Read().Holders(ctx)
	fmt.Println("readers:", n)

	_, err = rw.Write().TryLock(ctx, 0, 0) // a writer must wait for them
	fmt.Println("writer while reading:", errors.Is(err, distsync.ErrNotAcquired))

	_ = rw.Read().Unlock(r1)
	_ = rw.Read().Unlock(r2)
	w, err := rw.Write().Lock(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println("writing")
	_ = rw.Write().Unlock(w)
	// Output:
	// readers: 2
	// writer while reading: true
	// writing
}

// The writer may take the read lock and then release the write lock: it
// keeps reading and other readers may join. A reader asking for the write
// lock gets ErrUpgrade instead of waiting for itself.
func ExampleSide_downgrade() {
	c, err := distsync.New(options)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	rw, _ := c.RWLock("example-downgrade", rwlock.PreferWriters())
	ctx := context.Background()

	w, err := rw.Write().Lock(ctx)
	if err != nil {
		panic(err)
	}
	r, err := rw.Read().Lock(w) // same owner: allowed while writing
	if err != nil {
		panic(err)
	}
	_ = rw.Write().Unlock(w) // now an ordinary reader
	fmt.Println("still reading:", r.Err() == nil)

	_, err = rw.Write().Lock(r)
	fmt.Println("upgrade refused:", errors.Is(err, distsync.ErrUpgrade))
	_ = rw.Read().Unlock(r)
	// Output:
	// still reading: true
	// upgrade refused: true
}
