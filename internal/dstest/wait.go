package dstest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

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

// Listeners returns how many connections listen on channel on the server
// c talks to (PUBSUB NUMSUB): where a release tells the waiters of one
// Client, whether that Client still listens.
func Listeners(tb testing.TB, c *distsync.Client, channel string) int64 {
	tb.Helper()
	rc := c.Rueidis()
	m, err := rc.Do(context.Background(), rc.B().PubsubNumsub().Channel(channel).Build()).AsIntMap()
	if err != nil {
		tb.Fatalf("PUBSUB NUMSUB %s: %v", channel, err)
	}
	return m[channel]
}

// WaitUnsubscribed waits (at most 20 s) until nobody listens on channel:
// the server closes the subscriptions of a Client whose connections
// closed, as they do when its process dies (Crash).
func WaitUnsubscribed(tb testing.TB, c *distsync.Client, channel string) {
	tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for Listeners(tb, c, channel) > 0 {
		if time.Now().After(deadline) {
			tb.Fatalf("channel %s: still listened to", channel)
		}
		time.Sleep(time.Millisecond)
	}
}

// StandIn stands for a process that stopped with its connections open
// (paused, or cut off from everything but the server): once nobody listens
// on channel (WaitUnsubscribed, after Crash of the Client whose channel it
// is), a connection of its own subscribes to it until the test ends, so
// that the server cannot tell that the Client is gone and a release treats
// its waiters as live.
func StandIn(tb testing.TB, c *distsync.Client, channel string) {
	tb.Helper()
	WaitUnsubscribed(tb, c, channel) // then the only listener is the stand-in
	stand := Client(tb).Rueidis()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = stand.Receive(ctx, stand.B().Subscribe().Channel(channel).Build(), func(rueidis.PubSubMessage) {})
	}()
	tb.Cleanup(func() { cancel(); <-done })
	deadline := time.Now().Add(20 * time.Second)
	for Listeners(tb, c, channel) == 0 {
		if time.Now().After(deadline) {
			tb.Fatalf("channel %s: the stand-in does not listen", channel)
		}
		time.Sleep(time.Millisecond)
	}
}

// EndRegistrations makes the registrations of the waiters ids end, as if
// their time had passed, where the server keeps each one's end (ms on its
// clock) at key: the member's score in a waiter set (a sorted set: the
// read-write lock's), or the first field of the waiter's entry in a hash
// (the mutex's and the permit semaphore's entries). That end becomes 1. A
// test's way to stand for waiters that vanished long ago without the
// server knowing, whose registrations a release drops.
func EndRegistrations(tb testing.TB, c *distsync.Client, key string, ids []string) {
	tb.Helper()
	rc := c.Rueidis()
	ctx := context.Background()
	typ, err := rc.Do(ctx, rc.B().Type().Key(key).Build()).ToString()
	if err != nil {
		tb.Fatalf("type of %s: %v", key, err)
	}
	for _, id := range ids {
		if typ == "zset" {
			n, err := rc.Do(ctx, rc.B().Zadd().Key(key).Xx().Ch().ScoreMember().ScoreMember(1, id).Build()).AsInt64()
			if err != nil || n != 1 {
				tb.Fatalf("waiter %s of %s: %d changed (err %v)", id, key, n, err)
			}
			continue
		}
		e, err := rc.Do(ctx, rc.B().Hget().Key(key).Field(id).Build()).ToString()
		if err != nil {
			tb.Fatalf("entry %s of %s: %v", id, key, err)
		}
		_, rest, ok := strings.Cut(e, " ")
		if !ok {
			tb.Fatalf("entry %s of %s: %q has no end", id, key, e)
		}
		if err := rc.Do(ctx, rc.B().Hset().Key(key).FieldValue().FieldValue(id, "1 "+rest).Build()).Error(); err != nil {
			tb.Fatalf("entry %s of %s: %v", id, key, err)
		}
	}
}
