package dstest

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/distsync/distsync"
)

// ServerSecond returns the server's clock (TIME) in whole seconds, for a
// test that writes registrations whose ends are on the server's clock.
func ServerSecond(tb testing.TB, c *distsync.Client) int64 {
	tb.Helper()
	rc := c.Rueidis()
	now, err := rc.Do(context.Background(), rc.B().Time().Build()).AsStrSlice()
	if err != nil {
		tb.Fatalf("TIME: %v", err)
	}
	sec, err := strconv.ParseInt(now[0], 10, 64)
	if err != nil {
		tb.Fatalf("TIME: %v", err)
	}
	return sec
}

// QueueGhost queues waiter id of no process in a FIFO queue of waiters (the
// fair lock's, the election's): the list at key list, at its tail or, with
// head, ahead of every waiter, and its window ending d from now in the
// sorted set at key ends.
func QueueGhost(tb testing.TB, c *distsync.Client, list, ends, id string, d time.Duration, head bool) {
	tb.Helper()
	rc := c.Rueidis()
	end := float64(ServerSecond(tb, c)*1000 + d.Milliseconds())
	push := rc.B().Rpush().Key(list).Element(id).Build()
	if head {
		push = rc.B().Lpush().Key(list).Element(id).Build()
	}
	for _, cmd := range []rueidis.Completed{rc.B().Zadd().Key(ends).ScoreMember().ScoreMember(end, id).Build(), push} {
		if err := rc.Do(context.Background(), cmd).Error(); err != nil {
			tb.Fatalf("queueing %s: %v", id, err)
		}
	}
}
