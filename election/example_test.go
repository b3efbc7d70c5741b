package election_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/election"
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

// Observe pushes every change of leadership; a reader slower than the
// changes is given the newest.
func ExampleElection_Observe() {
	c, err := distsync.New(options)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	e, err := c.Election("example-observed")
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	states := e.Observe(ctx)
	show := func() {
		st := <-states
		if !st.Leader {
			fmt.Println("nobody leads")
			return
		}
		fmt.Println(st.Value, "leads")
	}
	show()
	lead, _, err := e.Campaign(ctx, "node-1")
	if err != nil {
		panic(err)
	}
	show()
	_ = e.Proclaim(lead, "node-1 (draining)")
	show()
	_ = e.Resign(lead)
	show()
	// Output:
	// nobody leads
	// node-1 leads
	// node-1 (draining) leads
	// nobody leads
}

// An election with a lease of its own and a liveness check: a leader whose
// process dies is succeeded within a second (not the Client's 30 s), and a
// leader whose work loop stops beating resigns at the next renewal, its
// leadership context saying why.
func ExampleWithLiveness() {
	c, err := distsync.New(options)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	errStuck := errors.New("the work loop stopped beating")
	var beat atomic.Int64 // the work loop's last beat (Unix ns)
	beat.Store(time.Now().UnixNano())
	alive := func(context.Context) error {
		if time.Since(time.Unix(0, beat.Load())) > 500*time.Millisecond {
			return errStuck
		}
		return nil
	}
	e, err := c.Election("example-worker", election.WithLease(time.Second), election.WithLiveness(alive))
	if err != nil {
		panic(err)
	}
	lead, _, err := e.Campaign(context.Background(), "node-1")
	if err != nil {
		panic(err)
	}
	for range 5 { // the work loop: work, then beat
		time.Sleep(100 * time.Millisecond)
		beat.Store(time.Now().UnixNano())
	}
	// The loop is stuck: no more beats.
	<-lead.Done()
	fmt.Println("resigned:", errors.Is(context.Cause(lead), errStuck))
	// Output:
	// resigned: true
}
