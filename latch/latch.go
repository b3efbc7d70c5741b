// Package latch is a distributed countdown latch on Redis, with the
// semantics of Java Redisson's RCountDownLatch: a count set once, counted
// down by anyone, and awaited by many until it reaches zero.
//
// The count lives in the hash "distsync:{name}" (field "n", with the kind
// marker "#k"); the latch is open when that key is
// absent (never set, counted down to zero, or deleted), so nothing is left
// behind once it opens. Awaiters are woken by pub/sub on ":ch" when the count
// reaches zero, never by polling.
//
// The errors it returns wrap those of package distsync (ErrNotHeld,
// ErrNotAcquired, ErrLeaseLost, ErrClosed, ...): test them with errors.Is.
package latch

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/distsync/distsync/internal/acquire"
	"github.com/distsync/distsync/internal/core"
	"github.com/distsync/distsync/observe"
)

// MaxCount bounds a latch's count: 2^53, the largest integer the server's
// Lua numbers hold exactly.
const MaxCount = 1 << 53

var (
	//go:embed trysetcount.lua
	trySetLua string
	//go:embed countdown.lua
	countDownLua string
	//go:embed await.lua
	awaitLua string
	//go:embed count.lua
	countLua string
	//go:embed delete.lua
	deleteLua string

	trySetScript    = core.NewScript(trySetLua)
	countDownScript = core.NewScript(countDownLua)
	awaitScript     = core.NewScript(awaitLua)
	deleteScript    = core.NewScript(deleteLua)
	countScript     = core.NewScript(countLua)
)

// Latch is a countdown latch: Java Redisson's RCountDownLatch. A latch that
// is absent or at zero is open: Await returns at once. TrySetCount closes it
// with a count; every CountDown takes one off, and the one that reaches zero
// opens it and wakes every awaiter, on every Client.
//
// A Latch is a cheap handle, safe for concurrent use.
type Latch struct {
	c       *core.Core
	name    string
	key     string // the count
	waiters string // the waiter set
	channel string // opening notifications
}

func init() {
	core.Register(observe.KindLatch, newLatch)
}

// newLatch returns the latch called name on c (Client.Latch).
func newLatch(c *core.Core, name string) (*Latch, error) {
	if err := core.ValidateName(name); err != nil {
		return nil, err
	}
	return &Latch{
		c:       c,
		name:    name,
		key:     c.Key(name, ""),
		waiters: c.Key(name, "waiters"),
		channel: c.Key(name, "ch"),
	}, nil
}

// Name returns the latch's name.
func (l *Latch) Name() string { return core.OrZero(l).name }

// Key returns the Redis key of the count; the latch's keys share its hash tag.
func (l *Latch) Key() string { return core.OrZero(l).key }

// TrySetCount closes an open latch with count n (1..MaxCount) and reports
// whether it did; it does nothing to a latch already counting down. Other
// values return ErrInvalidArgument. One round trip.
func (l *Latch) TrySetCount(ctx context.Context, n int64) (bool, error) {
	l = core.OrZero(l)
	if err := l.c.Closed(); err != nil {
		return false, l.errorf(err)
	}
	if n < 1 || n > MaxCount {
		return false, l.errorf(fmt.Errorf("%w: count %d out of [1, %d]", core.ErrInvalidArgument, n, int64(MaxCount)))
	}
	r, err := l.c.Eval(ctx, trySetScript, []string{l.key}, []string{strconv.FormatInt(n, 10)}).AsInt64()
	if err != nil {
		return false, l.errorf(err)
	}
	return r == 1, nil
}

// CountDown takes one off the count and returns the count after. The
// CountDown that reaches zero deletes the latch, which opens it, and
// publishes to wake every awaiter (only when someone awaits). Counting down
// an open latch does nothing and returns 0. One round trip. It is sent once,
// never repeated: after an error whose reply was lost (a dropped connection)
// it may or may not have been applied; read Count before counting down again.
func (l *Latch) CountDown(ctx context.Context) (int64, error) {
	l = core.OrZero(l)
	if err := l.c.Closed(); err != nil {
		return 0, l.errorf(err)
	}
	n, err := l.c.Eval(ctx, countDownScript, []string{l.key, l.waiters}, []string{l.channel, l.c.PublishCmd()}).AsInt64()
	if err != nil {
		return 0, l.errorf(err)
	}
	return n, nil
}

// Count returns the latch's count, 0 when it is open. One round trip.
func (l *Latch) Count(ctx context.Context) (int64, error) {
	l = core.OrZero(l)
	if err := l.c.Closed(); err != nil {
		return 0, l.errorf(err)
	}
	n, err := l.c.Eval(ctx, countScript, []string{l.key}, nil).AsInt64()
	if err != nil {
		return 0, l.errorf(err)
	}
	return max(n, 0), nil
}

// Await blocks until the latch is open (absent or at zero) or ctx ends,
// when it returns an error wrapping ctx.Err(), and returns ErrClosed when
// the Client is closed while it waits. An open latch returns at once after
// one round trip; otherwise Await sleeps, without polling, until a
// CountDown or Delete opens the latch (an opening while it subscribes is
// not missed).
func (l *Latch) Await(ctx context.Context) error {
	l = core.OrZero(l)
	if err := l.c.Closed(); err != nil {
		return l.errorf(err)
	}
	id := uuid.NewString()
	args := []string{"", core.Ms(l.c.WaiterWindow)}
	err := acquire.Do(ctx, acquire.WaitFor(l.c, l.channel, id, core.Forever,
		func(lctx context.Context) error { return l.c.Unwait(lctx, l.waiters, id) },
	), func(actx context.Context, waiter string) (bool, time.Duration, error) {
		args[0] = waiter
		r, err := l.c.Eval(actx, awaitScript, []string{l.key, l.waiters}, args).AsInt64()
		return r == 1, 0, err
	})
	if err != nil {
		return l.errorf(err)
	}
	return nil
}

// Delete deletes the latch, which opens it, wakes every awaiter and reports
// whether the latch was counting down. One round trip.
func (l *Latch) Delete(ctx context.Context) (bool, error) {
	l = core.OrZero(l)
	if err := l.c.Closed(); err != nil {
		return false, l.errorf(err)
	}
	r, err := l.c.Eval(ctx, deleteScript, []string{l.key, l.waiters}, []string{l.channel, l.c.PublishCmd()}).AsInt64()
	if err != nil {
		return false, l.errorf(err)
	}
	return r == 1, nil
}

func (l *Latch) errorf(err error) error {
	return fmt.Errorf("latch %q: %w", l.name, err)
}
