package main

import (
	"context"
	"strconv"
	"strings"

	"github.com/distsync/distsync"
)

// rwlockKind: the read-write lock is a hash ('#w' -> the writer; for each
// hold m = 'w:<owner>' or 'r:<owner>': m -> hold count, 't:'..m -> its
// fencing token, '#a:'..m -> its ledger of acquisitions) and ":leases", a sorted set
// hold -> end of its lease on the server clock; waiting readers and writers
// are in ":rwaiters" and ":wwaiters".
var rwlockKind = &kind{
	name:     "rwlock",
	keyType:  "hash",
	suffixes: []string{":leases", ":rwaiters", ":wwaiters"},
	detect: func(p *probe) fit {
		if ok, is := marked(p, "rwlock"); ok {
			return byMarker(is)
		}
		if p.exists(":leases") {
			return fitYes
		}
		if p.types[""] != "hash" {
			return fitNo
		}
		for f := range p.fields {
			if f == "#w" || strings.HasPrefix(f, "r:") || strings.HasPrefix(f, "w:") {
				return fitYes
			}
		}
		return fitNo
	},
	inspect: func(ctx context.Context, p *probe, r *report) error {
		leases, _, err := deadlines(ctx, p, ":leases")
		if err != nil {
			return err
		}
		for _, l := range leases {
			if len(l.member) < 3 {
				continue
			}
			mode := "read"
			if l.member[0] == 'w' {
				mode = "write"
			}
			n, _ := strconv.ParseInt(p.fields[l.member], 10, 64)
			o := newOwner(l.member[2:], n)
			o.Mode, o.TTLMs = mode, l.left
			o.Token, _ = strconv.ParseInt(p.fields["t:"+l.member], 10, 64)
			r.Owners = append(r.Owners, o)
			if mode == "write" || r.Mode == "" {
				r.Mode = mode
			}
			r.TTLMs = max(r.TTLMs, l.left)
		}
		r.Held = len(r.Owners) > 0
		for suffix, mode := range map[string]string{":wwaiters": "write", ":rwaiters": "read"} {
			ws, err := waitersOf(ctx, p, suffix)
			if err != nil {
				return err
			}
			for _, w := range ws {
				w.Mode = mode
				r.Waiters = append(r.Waiters, w)
			}
		}
		return nil
	},
	forceUnlock: func(ctx context.Context, c *distsync.Client, name string) (bool, error) {
		rw, err := c.RWLock(name)
		if err != nil {
			return false, err
		}
		w, err := rw.Write().ForceUnlock(ctx)
		if err != nil {
			return false, err
		}
		rd, err := rw.Read().ForceUnlock(ctx)
		return w || rd, err
	},
}
