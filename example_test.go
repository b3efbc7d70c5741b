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
