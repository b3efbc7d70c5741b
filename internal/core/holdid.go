package core

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// A hold ID names one acquisition across processes: "<acquisition
// id>@<owner>". An acquisition id has no '@'; an owner may.

// HoldID returns the hold ID of the acquisition of key that ctx carries,
// with no round trip; ErrNotHeld when it carries none or it ended.
func (c *Core) HoldID(ctx context.Context, key string) (string, error) {
	if err := c.Closed(); err != nil {
		return "", err
	}
	a := c.Holds.Lookup(ctx, key)
	if a == nil || !a.Held() {
		return "", ErrNotHeld
	}
	return a.ID + "@" + a.hold.key.owner, nil
}

// parseHoldID splits a hold ID into the acquisition id and the owner.
func parseHoldID(hid string) (id, owner string, err error) {
	id, owner, ok := strings.Cut(hid, "@")
	if !ok || id == "" || owner == "" {
		return "", "", fmt.Errorf("%w: %q is not a hold ID", ErrInvalidArgument, hid)
	}
	return id, owner, nil
}

// Local returns this Client's live acquisition id of key by owner, or nil.
func (h *Holds) Local(key, owner, id string) *Acq {
	h.mu.Lock()
	defer h.mu.Unlock()
	if hd := h.find(key, owner); hd != nil {
		for a := hd.acqs; a != nil; a = a.next {
			if a.ID == id {
				return a
			}
		}
	}
	return nil
}

// ReleaseByID releases acquisition id of owner once, as a ReleaseFunc, for
// the releaser by (a token of one ReleaseID call), and tells the holder's
// Client on its control channel (ds_tell_taken in lib.lua). Its reply is
// ds_release_mark's: 2 only when by released it before.
type ReleaseByID func(ctx context.Context, owner, id, by string) (int64, error)

// ReleaseID releases the acquisition hold ID hid names, of the lock at key,
// from any Client: by its own Unlock when this Client holds it, else with
// release, repeated on transient failures for ReleaseTimeout. It returns nil
// if and only if this call released it (or an attempt of it whose reply was
// lost did), ErrNotHeld when it was not held (released before, by its holder
// or another ReleaseID, its lease ended, or never granted).
func (c *Core) ReleaseID(ctx context.Context, key string, release ReleaseByID, hid string) error {
	if err := c.Closed(); err != nil {
		return err
	}
	id, owner, err := parseHoldID(hid)
	if err != nil {
		return err
	}
	if a := c.Holds.Local(key, owner, id); a != nil {
		return a.Unlock(ctx)
	}
	by := NewAcqID() // this call's releases, told from any other's
	var r int64
	err = RetryDetached(ctx, ReleaseTimeout, func(ctx context.Context) error {
		var err error
		r, err = release(ctx, owner, id, by)
		return err
	})
	switch {
	case err != nil:
		return ClosedErr(err)
	case r == releaseNoHold:
		return fmt.Errorf("%w: hold %s", ErrNotHeld, hid)
	}
	return nil
}

// ExtendID moves the end of the explicit lease of the acquisition hold ID
// hid names, of the lock at key (a hash of owner -> hold count, as Extend),
// to lease from now, from any Client: by the acquisition's own Extend when
// this Client holds it. ErrInvalidArgument, as Extend, when it is a live
// acquisition the watchdog renews; ErrNotHeld when it is not live; one
// round trip.
func (c *Core) ExtendID(ctx context.Context, key, hid string, lease time.Duration) error {
	if err := c.Closed(); err != nil {
		return err
	}
	id, owner, err := parseHoldID(hid)
	if err != nil {
		return err
	}
	if lease < MinLease {
		return fmt.Errorf("%w: lease %v, want at least %v", ErrInvalidArgument, lease, MinLease)
	}
	extend := func(ctx context.Context) (int64, error) {
		return c.Eval(ctx, extendScript, []string{key}, []string{owner, id, Ms(lease)}).AsInt64()
	}
	if a := c.Holds.Local(key, owner, id); a != nil {
		return a.Extend(ctx, lease, func(ctx context.Context) (bool, error) {
			r, err := extend(ctx)
			return r == 1, err
		})
	}
	r, err := extend(ctx)
	switch {
	case err != nil:
		return err
	case r == 2:
		return fmt.Errorf("%w: the watchdog renews hold %s", ErrInvalidArgument, hid)
	case r != 1:
		return fmt.Errorf("%w: hold %s", ErrNotHeld, hid)
	}
	return nil
}
