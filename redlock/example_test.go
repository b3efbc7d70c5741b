package redlock_test

import (
	"context"
	"fmt"
	"time"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/redlock"
)

// A Redlock over three masters: one Client and one mutex of the same name per
// master. (Here the three "masters" are three databases of one test server;
// in production they are independent servers.)
func Example() {
	srv := dstest.Shared() // the test server; in production, your servers
	var masters []distsync.Locker
	for db := range 3 {
		c, err := distsync.New(distsync.Options{Addrs: []string{srv.Addr()}, RESP2: srv.RESP2(), DB: db})
		if err != nil {
			panic(err)
		}
		defer c.Close()
		m, _ := c.Mutex("example-invoice-run")
		masters = append(masters, m)
	}
	l, err := redlock.New(masters, redlock.WithMasterTimeout(time.Second))
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
