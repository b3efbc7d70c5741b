package core

import (
	"context"
	"time"
)

// share is the server record of acquisitions that share it (Holds.Reenter):
// n live acquisitions carry its id, and the release of the last one sends
// it. It changes under Holds.mu.
type share struct{ n int }

// Reenter re-enters, with no round trip, the hold of key by owner that this
// Client has, when the hold has a live acquisition renewed by the watchdog:
// the new acquisition, renewed by the watchdog too, shares that one's record
// on the server (its id and its fencing token, the hold's), so the server's
// hold lives, renewed, until the last acquisition sharing it is released,
// and only that release is sent. It returns the acquisition, whose context
// is as Grant's, or nil when the hold has no such acquisition (or the
// Client is closing): the caller then asks the server.
//
// Every guarantee stays: the hold count (HoldCount adds what is shared, and
// so does Inspect on this Client; other Clients see the server's), the
// hold's token (a re-entry keeps it, as on the server), a lease no shorter
// than promised (the record is renewed while any acquisition sharing it
// lives), and an exact Unlock (a shared release applies at once, here; the
// last one is the server's release of the record, retried by its id).
func (h *Holds) Reenter(parent context.Context, key, owner string) *Acq {
	h.mu.Lock()
	hd := h.m[holdKey{key, owner}]
	if h.closed != nil || hd == nil || hd.entry == nil {
		h.mu.Unlock()
		return nil
	}
	var base *Acq
	for _, a := range hd.acqs {
		if a.exp != nil {
			continue
		}
		a.mu.Lock()
		live, unknown := a.live, a.unknown
		a.mu.Unlock()
		if live {
			base = a
			a := &Acq{ID: base.ID, Token: base.Token, granted: Mono(time.Now()), live: true, unknown: unknown}
			if base.share == nil {
				base.share = &share{n: 1}
			}
			base.share.n++
			a.share = base.share
			h.start(a, parent, owner)
			a.hold = hd
			hd.acqs = append(hd.acqs, a)
			hd.watch++
			h.mu.Unlock()
			h.watchParent(a, parent)
			return a
		}
	}
	h.mu.Unlock()
	return nil
}

// leaveShare takes a, being released, out of the record it shares, if any:
// true when other live acquisitions still share it (a's release is then
// applied here, without a round trip).
func (a *Acq) leaveShare() bool {
	h := a.hold.holds
	h.mu.Lock()
	defer h.mu.Unlock()
	if a.share == nil {
		return false
	}
	a.share.n--
	return a.share.n > 0
}

// Shared counts the acquisitions of the hold of key by owner that share
// another's record on the server: what the server's hold count misses.
func (h *Holds) Shared(key, owner string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	hd := h.m[holdKey{key, owner}]
	if hd == nil {
		return 0
	}
	n := 0
	seen := map[*share]bool{}
	for _, a := range hd.acqs {
		if a.share != nil {
			if seen[a.share] {
				n++
			}
			seen[a.share] = true
		}
	}
	return n
}
