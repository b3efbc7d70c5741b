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

// WaitControl waits (at most 20 s) until c listens to its control channel
// (a Client with the default prefix): a test's way to know that a take-over
// from elsewhere reaches c's holds by push. A Client subscribes once its
// first acquisition starts.
func WaitControl(tb testing.TB, c *distsync.Client) {
	tb.Helper()
	rc := c.Rueidis()
	ch := "distsync:ctl:" + c.ID()
	deadline := time.Now().Add(20 * time.Second)
	for {
		m, err := rc.Do(context.Background(), rc.B().PubsubNumsub().Channel(ch).Build()).AsIntMap()
		if err == nil && m[ch] > 0 {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("control channel %s: no subscriber (err %v)", ch, err)
		}
		time.Sleep(time.Millisecond)
	}
}
