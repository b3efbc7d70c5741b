package election_test

import (
	"context"
	"fmt"

	"github.com/distsync/distsync"
)

// options points the examples at the test server; in a program it would be
// distsync.Options{Addrs: []string{"127.0.0.1:6379"}}.
var options distsync.Options

// One candidate leads at a time; when it resigns, the next in line leads at
// once, with a larger term to fence its writes with.
func ExampleElection() {
	c, err := distsync.New(options)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	e, err := c.Election("example-scheduler")
	if err != nil {
		panic(err)
	}
	ctx := context.Background()

	lead, term, err := e.Campaign(ctx, "node-1")
	if err != nil {
		panic(err)
	}
	st, _ := e.Leader(ctx)
	fmt.Println("leader:", st.Value)

	next := make(chan int64)
	go func() {
		// Blocks until node-1 resigns.
		lead2, term2, err := e.Campaign(ctx, "node-2")
		if err != nil {
			panic(err)
		}
		defer e.Resign(lead2)
		next <- term2
	}()
	for n, _ := e.Candidates(ctx); n == 0; n, _ = e.Candidates(ctx) {
	}

	// Work under lead (it ends when the leadership does), then hand over.
	_ = e.Resign(lead)
	fmt.Println("term increased:", <-next > term)
	// Output:
	// leader: node-1
	// term increased: true
}
