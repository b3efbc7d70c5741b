package main

import (
	"context"

	"github.com/distsync/distsync"
)

// latchKind: the latch is its count, an integer under the main key (absent
// when open), and its waiters in ":waiters". A bare integer could also be a
// semaphore.
var latchKind = &kind{
	name:     "latch",
	keyType:  "string",
	suffixes: []string{":waiters"},
	detect: func(p *probe) fit {
		if p.types[""] == "string" && !p.exists(":permits") && !p.exists(":needs") {
			return fitMaybe
		}
		return fitNo
	},
	inspect: func(ctx context.Context, p *probe, r *report) error {
		n, err := intAt(ctx, p, "")
		if err != nil {
			return err
		}
		r.Count, r.Held = &n, n > 0
		r.Waiters, err = waitersOf(ctx, p, ":waiters")
		return err
	},
	remove: func(ctx context.Context, c *distsync.Client, name string) (bool, error) {
		l, err := c.Latch(name)
		if err != nil {
			return false, err
		}
		return l.Delete(ctx)
	},
}
