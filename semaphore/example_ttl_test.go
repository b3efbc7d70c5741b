package semaphore_test

import (
	"context"
	"fmt"
	"time"

	"github.com/distsync/distsync"
)

// A semaphore made on the fly, which disappears when nobody has used it for
// a minute (the pattern: TrySetPermitsTTL before each use).
func ExampleSemaphore_TrySetPermitsTTL() {
	c, err := distsync.New(options)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	s, err := c.Semaphore("example-tenant-42")
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	if _, err := s.TrySetPermitsTTL(ctx, 2, time.Minute); err != nil {
		panic(err)
	}
	if err := s.Acquire(ctx, 1); err != nil { // the minute starts again
		panic(err)
	}
	defer s.Release(ctx, 1)
	n, _ := s.Available(ctx)
	fmt.Println(n)
	// Output: 1
}
