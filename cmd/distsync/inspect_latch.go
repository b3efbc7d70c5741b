package main

import (
	"context"
	"strconv"

	"github.com/distsync/distsync"
)

// latchKind: the latch is a hash under the main key ('#k' -> "latch", 'n'
// -> its count; absent when open), and its waiters in ":waiters".
var latchKind = &kind{
	name:     "latch",
	keyType:  "hash",
	suffixes: []string{":waiters"},
	detect: func(p *probe) fit {
		ok, is := marked(p, "latch")
		return byMarker(ok && is)
	},
	inspect: func(ctx context.Context, p *probe, r *report) error {
		n, err := strconv.ParseInt(p.fields["n"], 10, 64)
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
