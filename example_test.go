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
