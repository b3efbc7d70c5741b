package main

import (
	"context"

	"github.com/distsync/distsync"
)

// fairlockKind: the fair lock is the mutex's hash plus its queue: ":queue",
// a list of waiter ids head first, and ":deadlines", a sorted set waiter id
// -> end of its wait window. Without waiters its keys are a mutex's, and
// inspect reports it as one (the same holders, TTL and token).
var fairlockKind = &kind{
	name:     "fairlock",
	keyType:  "hash",
	alike:    mutexKind,
	suffixes: []string{":queue", ":deadlines"},
	detect: func(p *probe) fit {
		if ok, is := marked(p, "fairlock"); ok {
			return byMarker(is)
		}
		if !p.exists(":queue") && !p.exists(":deadlines") {
			return fitNo
		}
		if p.exists("") && !ownerHash(p) {
			return fitNo
		}
		return fitYes
	},
	inspect: func(ctx context.Context, p *probe, r *report) error {
		if err := inspectOwnerHash(ctx, p, r); err != nil {
			return err
		}
		ids, err := p.rc.Do(ctx, p.rc.B().Lrange().Key(p.keyOf(":queue")).Start(0).Stop(-1).Build()).AsStrSlice()
		if err != nil {
			return err
		}
		windows, _, err := deadlines(ctx, p, ":deadlines")
		if err != nil {
			return err
		}
		left := map[string]int64{}
		for _, w := range windows {
			left[w.member] = w.left
		}
		for _, id := range ids {
			if ms, ok := left[id]; ok {
				r.Waiters = append(r.Waiters, waiter{ID: id, WindowMs: ms})
			}
		}
		return nil
	},
	forceUnlock: func(ctx context.Context, c *distsync.Client, name string) (bool, error) {
		f, err := c.FairLock(name)
		if err != nil {
			return false, err
		}
		return f.ForceUnlock(ctx)
	},
}
