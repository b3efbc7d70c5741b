package core

import (
	"context"
	"fmt"
	"time"
)

// TryAcquire runs one attempt of a script that may grant a hold, through
// EvalAcquire, and returns its reply of at least two integers: {token, hold
// count} when it granted, otherwise {0 or a negative code, detail, ...}. When replica
// acknowledgement is configured and too few replicas acknowledged a grant,
// it returns the reply with an error wrapping ErrNotReplicated: the caller
// must give the grant back (a failover could otherwise hand it to another
// owner).
func (c *Core) TryAcquire(ctx context.Context, s *Script, keys, args []string) ([]int64, error) {
	r, ackErr := c.EvalAcquire(ctx, s, keys, args)
	res, err := r.AsIntSlice()
	if err != nil {
		return nil, err
	}
	if len(res) < 2 {
		return nil, fmt.Errorf("unexpected reply %v", res)
	}
	if res[0] > 0 && ackErr != nil {
		return res, ackErr
	}
	return res, nil
}

// RetryAfter turns the remaining milliseconds a refusing script reported into
// the acquire loop's retry hint: a negative value (no expiry known) is 0,
// "unknown"; 0 (it ends within the millisecond) is 1 ms, so that a waiter
// refused at the very end of a lease retries then instead of sleeping long.
func RetryAfter(ms int64) time.Duration {
	switch {
	case ms < 0:
		return 0
	case ms == 0:
		return time.Millisecond
	}
	return time.Duration(ms) * time.Millisecond
}
