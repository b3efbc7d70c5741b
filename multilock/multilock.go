// Package multilock acquires several locks as one, all or none, with the
// semantics of Redisson's RedissonMultiLock: a Lock over any lockers of
// distsync (mutexes, fair locks, the read or write side of read-write locks,
// even redlocks), which may live on different Clients, different servers and
// different Cluster hash slots.
//
// Members are taken in one global order, by their Redis key (lockers with
// equal keys in the order given to New: give them in the same order
// everywhere), so two multilocks over overlapping sets never deadlock each
// other. The wait budget is shared; when a member cannot be acquired in
// time, those taken are released before TryLock returns. A hold's context is
// cancelled as soon as any member's context ends (the cause wraps the
// member's: ErrLeaseLost, or ErrLeaseExpired when an explicit lease ran out
// on the first member), with ErrReleased after Unlock,
// and when the context it was acquired on ends, which releases every member.
//
// How it works: docs/how-it-works.md#multilock.
package multilock

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/compose"
	"github.com/distsync/distsync/internal/core"
)

// Lock is all of its lockers held as one. It is safe for concurrent use and
// holds no state of its own between calls: a hold lives in the context
// TryLock returns.
type Lock struct {
	lockers []distsync.Locker // as given to New
	order   []int             // acquisition order: by key, ties as given
	key     string
}

var _ distsync.Locker = (*Lock)(nil)

// forever is the member wait budget of Lock, which waits until ctx is done.
const forever = time.Duration(math.MaxInt64)

type holdKey struct{ l *Lock }

// hold is one acquisition of a Lock; its members are in New's order.
type hold struct{ compose.Hold }

// New returns the multilock over lockers, to be acquired in the order of
// their keys (see the package doc). It makes no I/O. It returns
// ErrInvalidArgument when lockers is empty or contains a nil Locker, also a
// nil pointer such as the *mutex.Mutex that Client.Mutex returns with an
// error (refused here rather than met by a panic later).
func New(lockers []distsync.Locker) (*Lock, error) {
	if err := errors.Join(compose.CheckLockers(lockers)...); err != nil {
		return nil, fmt.Errorf("multilock: %w", err)
	}
	l := &Lock{lockers: slices.Clone(lockers), order: make([]int, len(lockers))}
	for i := range l.order {
		l.order[i] = i
	}
	slices.SortStableFunc(l.order, func(a, b int) int { return strings.Compare(lockers[a].Key(), lockers[b].Key()) })
	keys := make([]string, len(l.order))
	for k, i := range l.order {
		keys[k] = lockers[i].Key()
	}
	l.key = strings.Join(keys, ",")
	return l, nil
}

// Shared reports whether several owners may hold the multilock at once:
// whether a member may be (the read side of a read-write lock).
func (l *Lock) Shared() bool { return compose.Shared(core.OrZero(l).lockers...) }

// Key returns the keys of the lockers in acquisition order, joined by commas.
func (l *Lock) Key() string { return core.OrZero(l).key }

// Lock is TryLock(ctx, distsync.Forever, 0): it blocks until every member
// is held with its watchdog lease, or until ctx ends.
func (l *Lock) Lock(ctx context.Context) (context.Context, error) {
	return l.lock(ctx, -1, 0)
}

// TryLock acquires every member or none, in key order, within the wait
// budget they share (0: each is tried once), passing lease to each (0: each
// member's watchdog lease, renewed until Unlock). If a member is not
// acquired, those acquired are released and the error wraps the member's
// (ErrNotAcquired when the budget was spent, ctx.Err() when ctx ended,
// leaving nothing held). The returned context carries the hold, ends with
// any member's, and re-enters every member. Negative durations and a lease
// under distsync.MinLease return ErrInvalidArgument.
func (l *Lock) TryLock(ctx context.Context, wait, lease time.Duration) (context.Context, error) {
	if err := core.CheckDuration("wait", wait); err != nil {
		return ctx, fmt.Errorf("multilock: %w", err)
	}
	if err := core.CheckDuration("lease", lease); err != nil {
		return ctx, fmt.Errorf("multilock: %w", err)
	}
	return l.lock(ctx, wait, lease)
}

func (l *Lock) lock(in context.Context, wait, lease time.Duration) (context.Context, error) {
	if l == nil || len(l.lockers) == 0 {
		return in, fmt.Errorf("multilock: %w: a nil or zero Lock, not made by New", distsync.ErrInvalidArgument)
	}
	// One owner for every member, so that the returned context re-enters them.
	ctx, _ := core.WithOwner(in)
	start := time.Now()
	members := make([]context.Context, len(l.lockers))
	for _, i := range l.order {
		budget := forever
		if wait >= 0 {
			budget = max(0, wait-time.Since(start))
		}
		mctx, err := l.lockers[i].TryLock(ctx, budget, lease)
		if err != nil {
			if rerr := l.release(members); rerr != nil {
				err = errors.Join(err, rerr)
			}
			return in, fmt.Errorf("multilock: %w", err)
		}
		members[i] = mctx
	}
	h := &hold{}
	return h.Start(ctx, "multilock", members, len(members), holdKey{l}, h), nil
}

// Unlock releases every member of the hold ctx carries (a context TryLock
// returned; its cancellation does not matter), one member Unlock each, having
// ended the hold's context with cause ErrReleased first. It returns the members'
// errors joined (a member whose lease was lost reports ErrNotHeld), and
// ErrNotHeld when ctx carries no hold of l or it was released already.
func (l *Lock) Unlock(ctx context.Context) error {
	h := l.lookup(ctx)
	if h == nil || !h.Release() {
		return fmt.Errorf("multilock: %w", distsync.ErrNotHeld)
	}
	err := l.release(h.Members())
	if err != nil {
		return fmt.Errorf("multilock: %w", err)
	}
	return nil
}

// Members returns the contexts of the hold ctx carries, one per locker in the
// order given to New, for what a member offers on its own (such as a mutex's
// fencing token: m.Token(members[i]) for the member mutex m). It returns nil when ctx carries no
// hold of l. Release through Unlock, not through the members.
func (l *Lock) Members(ctx context.Context) []context.Context {
	if h := l.lookup(ctx); h != nil {
		return h.Members()
	}
	return nil
}

func (l *Lock) lookup(ctx context.Context) *hold {
	h, _ := ctx.Value(holdKey{l}).(*hold)
	return h
}

// release unlocks the acquired members in reverse acquisition order.
func (l *Lock) release(members []context.Context) error {
	var errs []error
	for k := len(l.order) - 1; k >= 0; k-- {
		i := l.order[k]
		if members[i] == nil {
			continue
		}
		if err := l.lockers[i].Unlock(members[i]); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
