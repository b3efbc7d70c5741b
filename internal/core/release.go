package core

import (
	"context"
	"strconv"
	"time"
)

// Release runs the release of the hold of key that ctx carries, with the
// bookkeeping every reentrant lock shares: ErrNotHeld when ctx carries no
// owner or its acquisition was already released, one request id per
// acquisition (the same on a retry, so a release whose reply was lost is not
// applied twice), the watchdog stopped before the last count is released,
// and the acquisition's contexts cancelled afterwards.
//
// exec runs the primitive's release script on a context bounded by
// ReleaseTimeout that ignores ctx's cancellation, and replies 1 when the owner
// no longer holds key, 0 when a hold count remains (or this request was
// applied before) and -1 when the owner does not hold key.
func (c *Core) Release(ctx context.Context, key string, exec func(ctx context.Context, owner, reqID string) (int64, error)) error {
	owner, ok := c.OwnerOf(ctx)
	if !ok {
		return ErrNotHeld
	}
	acq := c.Holds.Lookup(ctx, key)
	reqID, retried := "", false
	if acq != nil {
		var err error
		if reqID, retried, err = acq.BeginRelease(); err != nil {
			return err
		}
	} else {
		reqID = "once:" + strconv.FormatInt(time.Now().UnixNano(), 36)
	}
	ictx, cancel := IOContext(ctx, ReleaseTimeout)
	defer cancel()
	r, err := exec(ictx, owner, reqID)
	if err != nil {
		return err
	}
	switch {
	case r == 1, r == -1 && retried:
		// Released now, or by an earlier attempt whose reply was lost.
		if acq != nil {
			acq.Released(true)
		}
		return nil
	case r == 0:
		if acq != nil {
			acq.Released(false)
		}
		return nil
	default:
		if acq != nil {
			acq.Released(true)
		}
		return ErrNotHeld
	}
}
