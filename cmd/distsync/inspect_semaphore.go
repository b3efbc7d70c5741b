package main

import (
	"context"
	"strconv"

	"github.com/redis/rueidis"

	"github.com/distsync/distsync"
)

// semaphoreKind: both semaphores keep the available permits in the main key
// (an integer); the permit semaphore keeps its held permits in ":permits", a
// sorted set permit id -> end of its lease; waiters are in ":waiters" and
// their needs in ":needs". A bare integer could also be a latch.
var semaphoreKind = &kind{
	name:     "semaphore",
	keyType:  "string",
	suffixes: []string{":permits", ":needs", ":waiters"},
	detect: func(p *probe) fit {
		switch {
		case p.exists(":permits") || p.exists(":needs"):
			return fitYes
		case p.types[""] == "string": // a latch is a hash
			return fitYes
		}
		return fitNo
	},
	inspect: func(ctx context.Context, p *probe, r *report) error {
		avail, err := intAt(ctx, p, "")
		if err != nil {
			return err
		}
		held, ended, err := deadlines(ctx, p, ":permits")
		if err != nil {
			return err
		}
		avail += ended // permits whose lease ended return to the pool at the next call
		for _, h := range held {
			r.Owners = append(r.Owners, owner{ID: h.member, Holds: 1, TTLMs: h.left})
		}
		r.Held = len(r.Owners) > 0
		r.Permits = &permits{Available: avail, Held: int64(len(r.Owners))}
		r.Waiters, err = waitersOf(ctx, p, ":waiters")
		return err
	},
	// A semaphore has no holds to force: permits of the permit semaphore
	// return by themselves when their lease ends. Delete removes it whole.
	remove: func(ctx context.Context, c *distsync.Client, name string) (bool, error) {
		s, err := c.PermitSemaphore(name) // the same keys as a counting semaphore's
		if err != nil {
			return false, err
		}
		return s.Delete(ctx)
	},
}

// intAt reads the integer at the key with suffix (0 when absent).
func intAt(ctx context.Context, p *probe, suffix string) (int64, error) {
	s, err := p.rc.Do(ctx, p.rc.B().Get().Key(p.keyOf(suffix)).Build()).ToString()
	if rueidis.IsRedisNil(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(s, 10, 64)
}
