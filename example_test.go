package distsync_test

import (
	"context"
	"fmt"

	"github.com/distsync/distsync"
)

// Run a job on only one host at a time.
func Example() {
	c, err := distsync.New(options)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	m, err := c.Mutex("nightly-report")
	if err != nil {
		panic(err)
	}
	ctx, err := m.Lock(context.Background())
	if err != nil {
		panic(err)
	}
	defer m.Unlock(ctx)
	fmt.Println("running the report under the lock")
	// Output: running the report under the lock
}

// See who holds a name, whatever kind of primitive it is.
func ExampleClient_Inspect() {
	o := options
	o.ClientName = "build-7"
	c, err := distsync.New(o)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	m, err := c.Mutex("example-inspect")
	if err != nil {
		panic(err)
	}
	ctx, err := m.Lock(context.Background())
	if err != nil {
		panic(err)
	}
	defer m.Unlock(ctx)

	info, err := c.Inspect(context.Background(), "example-inspect")
	if err != nil {
		panic(err)
	}
	for _, owner := range info.Owners {
		fmt.Println(info.Kind, "held by", owner.ClientName, "holds", owner.Holds)
	}
	// Output: mutex held by build-7 holds 1
}

// See who leads an election, and who campaigns next.
func ExampleClient_Inspect_election() {
	o := options
	o.ClientName = "node-7"
	c, err := distsync.New(o)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	e, err := c.Election("example-inspect-election")
	if err != nil {
		panic(err)
	}
	lead, term, err := e.Campaign(context.Background(), "10.0.0.7:8080")
	if err != nil {
		panic(err)
	}
	defer e.Resign(lead)

	info, err := c.Inspect(context.Background(), e.Name())
	if err != nil {
		panic(err)
	}
	fmt.Println(info.Kind, "led by", info.Owners[0].ClientName, "announcing", info.Leader.Value)
	fmt.Println("its term is the one Campaign returned:", info.Leader.Term == term)
	fmt.Println("candidates waiting:", len(info.Waiters))
	// Output:
	// election led by node-7 announcing 10.0.0.7:8080
	// its term is the one Campaign returned: true
	// candidates waiting: 0
}
