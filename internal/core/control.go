package core

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// The control channel of a Client is where scripts tell it, by push, that
// holds of its owners were taken over from elsewhere (ForceLock, a force
// unlock of any kind, a release by id, ForceResign): "<prefix>ctl:<client
// id>", with classic pub/sub, since the script that publishes runs in the
// slot of the lock, not of the channel (a Cluster forwards PUBLISH to every
// node). The message is "g:ctl" followed by "<owner> <key> <id>" for each
// hold taken and "-" (ds_tell_taken in lib.lua): id names the acquisition
// taken, "-" every acquisition of the hold; the key has '%' and ' ' escaped
// as %25 and %20 (the notifier's grant data has no spaces of its own).

// ControlPrefix is the prefix of the Clients' control channels: a script
// appends the client id (an owner's part before its first ':').
func (c *Core) ControlPrefix() string { return c.Prefix + "ctl:" }

// ControlUp reports whether this Client listens to its control channel.
func (c *Core) ControlUp() bool { return c.ctlUp.Load() }

// ControlWaiter is the waiter id of the control channel's one subscriber.
const ControlWaiter = "ctl"

// WatchControl makes sure this Client listens to its control channel: from
// then on, a hold of this Client taken over ends at once with ErrLeaseLost
// instead of at its next renewal. The first call starts the subscription in
// the background and returns at once: no acquisition waits for it (a first
// Lock costs no round trip more, and a server that does not answer cannot
// hold it up); a hold taken over before the subscription is up learns of it
// at its next renewal, as when subscribing fails. The later calls cost an
// atomic load. When subscribing fails, a later call tries again, at most
// once a second. Messages that come before the subscriber takes the first
// are taken together.
//
// A Client whose waiters spin (Config.Spin: pub/sub may be unavailable)
// does not subscribe: its holds learn of a take-over at their next renewal.
func (c *Core) WatchControl() {
	if c == nil || c.ctlUp.Load() || c.Spin.Max > 0 {
		return
	}
	c.ctlMu.Lock()
	if c.ctlUp.Load() || c.ctlBusy || time.Now().Before(c.ctlNext) || c.Closed() != nil {
		c.ctlMu.Unlock()
		return
	}
	c.ctlBusy = true
	c.ctlMu.Unlock()
	if !c.Go(c.control) {
		c.ctlMu.Lock()
		c.ctlBusy = false
		c.ctlMu.Unlock()
	}
}

// control subscribes to the control channel and ends the holds its messages
// name until the Client closes.
func (c *Core) control(jctx context.Context) {
	sub, err := c.Notifier.SubscribeClassic(jctx, c.ControlPrefix()+c.ID, ControlWaiter)
	c.ctlMu.Lock()
	c.ctlBusy = false
	if err != nil {
		c.ctlNext = time.Now().Add(time.Second)
	} else {
		c.ctlUp.Store(true)
	}
	c.ctlMu.Unlock()
	if err != nil {
		if c.Closed() == nil {
			c.Log.Warn("distsync: control channel: a hold taken over is learned at its next renewal", "err", err)
		}
		return
	}
	defer sub.Close()
	for {
		select {
		case <-sub.C():
			if grant, _, _ := sub.Take(); grant != "" {
				c.takenOver(grant)
			}
		case <-sub.Done():
			return
		case <-jctx.Done():
			return
		}
	}
}

// takenOver ends the holds and acquisitions that the control message data
// names.
func (c *Core) takenOver(data string) {
	f := strings.Fields(data)
	if len(f) == 2 { // "<owner> <key>": a whole hold, as older versions say
		f = append(f, "-")
	}
	cause := fmt.Errorf("%w: taken over from another Client (force unlocked, released by id, taken by ForceLock, or deposed by ForceResign)", ErrLeaseLost)
	for ; len(f) >= 3; f = f[3:] {
		key, err := url.PathUnescape(f[1])
		if err != nil {
			continue
		}
		if f[2] == "-" {
			c.Holds.End(key, f[0], cause)
		} else if a := c.Holds.Local(key, f[0], f[2]); a != nil && a.end(cause) {
			a.tellEnd(cause)
		}
	}
}
