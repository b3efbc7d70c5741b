package dstest

import (
	"context"
	"testing"
	"time"

	"github.com/distsync/distsync"
)

// WaitWaiters waits (at most 20 s) until the waiter set at key, a sorted
// set, has n members: a test's way to know that waiters are registered
// before it releases.
func WaitWaiters(tb testing.TB, c *distsync.Client, key string, n int64) {
	tb.Helper()
	rc := c.Rueidis()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, err := rc.Do(context.Background(), rc.B().Zcard().Key(key).Build()).AsInt64()
		if err == nil && got == n {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("waiter set %s: %d members, want %d (err %v)", key, got, n, err)
		}
		time.Sleep(time.Millisecond)
	}
}
