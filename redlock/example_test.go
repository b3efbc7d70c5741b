package redlock_test

import (
	"context"
	"fmt"
	"time"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/redlock"
)

// masters point the example at three independent masters (here three
// databases of the test server); in a program they would be, say,
// distsync.Options{Addrs: []string{"redis-a:6379"}} and so on.
var masters []distsync.Options

// A Redlock over three masters: one Client and one mutex of the same name per
// master.
func Example() {
	var lockers []distsync.Locker
	for _, o := range masters {
		c, err := distsync.New(o)
		if err != nil {
			panic(err)
		}
		defer c.Close()
		m, _ := c.Mutex("example-invoice-run")
		lockers = append(lockers, m)
	}
	l, err := redlock.New(lockers, redlock.WithMasterTimeout(time.Second))
	if err != nil {
		panic(err)
	}

	ctx, err := l.Lock(context.Background())
	if err != nil {
		panic(err)
	}
	g, _ := l.Grant(ctx)
	fmt.Printf("granted by %d of %d masters (quorum %d), valid for over 28s: %v\n",
		g.Acquired, g.Masters, g.Quorum, g.Validity > 28*time.Second)
	// Work under ctx: it is cancelled if fewer than a majority keep the lock.

	if err := l.Unlock(ctx); err != nil {
		panic(err)
	}
	fmt.Println(context.Cause(ctx))
	// Output:
	// granted by 3 of 3 masters (quorum 2), valid for over 28s: true
	// distsync: released
}
