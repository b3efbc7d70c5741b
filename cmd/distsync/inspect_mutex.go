package main

import (
	"context"
	"strconv"
	"strings"

	"github.com/distsync/distsync"
)

// mutexKind: the mutex is a hash owner -> hold count with metadata fields
// starting with '#' ('#t' the hold's fencing token, '#a:<owner>' the owner's
// ledger of acquisitions), and a waiter set ":waiters".
var mutexKind = &kind{
	name:     "mutex",
	keyType:  "hash",
	suffixes: []string{":waiters"},
	detect: func(p *probe) fit {
		if ok, is := marked(p, "mutex"); ok {
			return byMarker(is)
		}
		if ownerHash(p) {
			return fitYes
		}
		return fitNo
	},
	inspect: func(ctx context.Context, p *probe, r *report) error {
		if err := inspectOwnerHash(ctx, p, r); err != nil {
			return err
		}
		var err error
		r.Waiters, err = waitersOf(ctx, p, ":waiters")
		return err
	},
	forceUnlock: func(ctx context.Context, c *distsync.Client, name string) (bool, error) {
		m, err := c.Mutex(name)
		if err != nil {
			return false, err
		}
		return m.ForceUnlock(ctx)
	},
}

// inspectOwnerHash reads a mutex-shaped hash (see ownerHash) into r: the
// owners, the fencing token, the remaining lease.
func inspectOwnerHash(ctx context.Context, p *probe, r *report) error {
	for f, v := range p.fields {
		if strings.HasPrefix(f, "#") {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return err
		}
		r.Owners = append(r.Owners, newOwner(f, n))
	}
	r.Held = len(r.Owners) > 0
	if t, ok := p.fields["#t"]; ok {
		tok, err := strconv.ParseInt(t, 10, 64)
		if err != nil {
			return err
		}
		r.Token = tok
	}
	var err error
	r.TTLMs, err = ttlOf(ctx, p, "")
	return err
}

// marked reports whether the main key is a hash that carries the kind
// marker '#k' every hash-shaped primitive stores, and whether it names kind:
// then the kind is known exactly.
func marked(p *probe, kind string) (ok, is bool) {
	if p.types[""] != "hash" {
		return false, false
	}
	k, ok := p.fields["#k"]
	return ok, k == kind
}

// byMarker is a detect function's answer from the kind marker.
func byMarker(is bool) fit {
	if is {
		return fitYes
	}
	return fitNo
}

// ownerHash reports whether the main key is a hash of owner -> hold count
// with a fencing token '#t': the mutex's shape (and the fair lock's).
func ownerHash(p *probe) bool {
	if p.types[""] != "hash" {
		return false
	}
	if _, ok := p.fields["#t"]; !ok {
		return false
	}
	for f := range p.fields {
		if !strings.HasPrefix(f, "#") && !isOwnerName(f) {
			return false
		}
	}
	return true
}

// isOwnerName reports whether f looks like an owner, "<client id>:<owner
// id>": a colon and no read/write-lock hold prefix ("r:", "w:", "t:", "u:").
func isOwnerName(f string) bool {
	i := strings.LastIndexByte(f, ':')
	if i <= 0 || i == len(f)-1 {
		return false
	}
	switch f[:2] {
	case "r:", "w:", "t:", "u:":
		return false
	}
	return true
}
