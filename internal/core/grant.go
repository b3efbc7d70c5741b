package core

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/redis/rueidis"
)

// TryAcquire runs one attempt of a script that may grant a hold (with
// replica acknowledgement, followed by a WAIT: see EvalAcquire) and returns
// its reply of at least two integers, appended to buf (a caller's array
// spares an allocation): {token, hold count} when it granted, otherwise {0
// or a negative code, detail, ...}. When replica acknowledgement is
// configured and too few replicas acknowledged a grant, it returns the
// reply with an error wrapping ErrNotReplicated: the caller must give the
// grant back (a failover could otherwise hand it to another owner).
func (c *Core) TryAcquire(ctx context.Context, s *Script, keys, args []string, buf []int64) ([]int64, error) {
	var r rueidis.RedisResult
	var ackErr error
	if c.AckReplicas > 0 {
		r, ackErr = c.EvalAcquire(ctx, s, keys, args)
	} else {
		r = s.run(ctx, c, keys, args)
	}
	res, err := appendInts(buf, r)
	if err != nil {
		return nil, err
	}
	if len(res) < 2 {
		return nil, fmt.Errorf("unexpected reply %v", slices.Clone(res))
	}
	if res[0] > 0 && ackErr != nil {
		return res, ackErr
	}
	return res, nil
}

// appendInts appends the integers of the array r to buf, as
// RedisResult.AsIntSlice reads them (an integer, or a string holding one;
// anything else is 0) but without a slice of its own.
func appendInts(buf []int64, r rueidis.RedisResult) ([]int64, error) {
	vs, err := r.ToArray()
	if err != nil {
		return nil, err
	}
	for i := range vs {
		v := &vs[i]
		var n int64
		if v.IsInt64() {
			n, _ = v.AsInt64()
		} else if s, err := v.ToString(); err == nil && s != "" {
			if n, err = strconv.ParseInt(s, 10, 64); err != nil {
				return nil, err
			}
		}
		buf = append(buf, n)
	}
	return buf, nil
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

// GrantInfo is what the grant of an acquisition promised: a composed lock
// (redlock) that adopts acquisitions its members made while it waited counts
// its validity from them. Only the first acquisition made with a context
// carrying it (WithGrantInfo) fills it in.
type GrantInfo struct {
	once sync.Once
	// SentAt is a lower bound of the start of the server's lease: the send
	// of the granting request (a repeated attempt renews the lease from its
	// own run).
	SentAt time.Time
	// Lease is the lease the grant left on the server from SentAt: the
	// explicit or watchdog lease, or the shorter lease of a lock a release
	// handed to a waiter (until its first renewal).
	Lease time.Duration
}

type grantInfoKey struct{}

// WithGrantInfo returns ctx asking the acquisition made with it to describe
// its grant in g.
func WithGrantInfo(ctx context.Context, g *GrantInfo) context.Context {
	return context.WithValue(ctx, grantInfoKey{}, g)
}

// ReportGrant fills in the GrantInfo ctx carries, if any and if not done.
func ReportGrant(ctx context.Context, sentAt time.Time, lease time.Duration) {
	if g, _ := ctx.Value(grantInfoKey{}).(*GrantInfo); g != nil {
		g.once.Do(func() { g.SentAt, g.Lease = sentAt, lease })
	}
}
