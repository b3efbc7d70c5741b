// Package compose is what the composed locks (multilock, redlock) share: one
// acquisition's member contexts merged into the one context the composed lock
// hands out.
package compose

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/distsync/distsync/internal/core"
)

// CheckLockers returns what keeps lockers from making a composed lock,
// each error wrapping ErrInvalidArgument: none given, or one that is nil,
// also a nil pointer in a non-nil interface (the *mutex.Mutex that
// Client.Mutex returns with an error, say), whose methods would panic.
func CheckLockers[L any](lockers []L) []error {
	if len(lockers) == 0 {
		return []error{fmt.Errorf("%w: no lockers", core.ErrInvalidArgument)}
	}
	var errs []error
	for i, lk := range lockers {
		if IsNil(lk) {
			errs = append(errs, fmt.Errorf("%w: locker %d is nil (%T)", core.ErrInvalidArgument, i, lk))
		}
	}
	return errs
}

// Shared reports whether any of lockers says (by a method Shared() bool)
// that several owners may hold it at once: the read side of a read-write
// lock, or a composed lock with such a member.
func Shared[L any](lockers ...L) bool {
	for _, lk := range lockers {
		if s, ok := any(lk).(interface{ Shared() bool }); ok && s.Shared() {
			return true
		}
	}
	return false
}

// IsNil reports whether v is nil or holds a nil pointer, map, slice,
// function, channel or interface.
func IsNil(v any) bool {
	if v == nil {
		return true
	}
	switch r := reflect.ValueOf(v); r.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface, reflect.UnsafePointer:
		return r.IsNil()
	}
	return false
}

// Hold is one acquisition of a composed lock: each member's own context (which
// the member's Unlock needs) and the composed context's cancellation.
type Hold struct {
	members  []context.Context // per locker, nil where not held
	stop     func()
	cancel   context.CancelCauseFunc
	released atomic.Bool
}

// Start makes the composed context: derived from ctx, carrying self (the
// composed lock's hold value, which embeds h) under key, and cancelled, with
// a cause wrapping the member's, once fewer than need of the non-nil members
// are left: a member is lost when its context ends (its lease was lost or
// expired, or it was released on its own).
//
// Start starts no goroutine: it registers a context.AfterFunc on each member,
// which Release stops.
func (h *Hold) Start(ctx context.Context, what string, members []context.Context, need int, key, self any) context.Context {
	h.members = members
	ctx, h.cancel = context.WithCancelCause(ctx)
	held := 0
	for _, m := range members {
		if m != nil {
			held++
		}
	}
	var mu sync.Mutex
	lost := 0
	stops := make([]func() bool, 0, held)
	for _, m := range members {
		if m == nil {
			continue
		}
		stops = append(stops, context.AfterFunc(m, func() {
			mu.Lock()
			lost++
			n := lost
			mu.Unlock()
			if held-n < need {
				h.cancel(fmt.Errorf("%s: %d of %d members lost, fewer than %d left: %w", what, n, held, need, context.Cause(m)))
			}
		}))
	}
	h.stop = func() {
		for _, s := range stops {
			s()
		}
	}
	return &composed{Context: context.WithValue(ctx, key, self), members: members, need: need}
}

// composed is the composed context: it ends by itself once fewer than need
// members are left, so its Deadline is the deadline by which that many
// members' contexts have ended (those of explicit leases end by
// themselves, and Extend moves them), or its parent's when that is earlier.
type composed struct {
	context.Context
	members []context.Context
	need    int
}

func (c *composed) Deadline() (time.Time, bool) {
	pd, ok := c.Context.Deadline()
	if e, eok := End(c.members, c.need); eok && (!ok || e.Before(pd)) {
		return e, true
	}
	return pd, ok
}

// End returns when fewer than need of the non-nil members are left, by
// their contexts' deadlines (those of explicit leases end by themselves),
// and false when at least need of them have none.
func End(members []context.Context, need int) (time.Time, bool) {
	held := 0
	var ends []time.Time
	for _, m := range members {
		if m == nil {
			continue
		}
		held++
		if d, ok := m.Deadline(); ok {
			ends = append(ends, d)
		}
	}
	// Members without a deadline never end by themselves: sorted, the
	// (held-need)th end (from 0) is the one that leaves fewer than need.
	if k := held - need; k >= 0 && k < len(ends) {
		slices.SortFunc(ends, time.Time.Compare)
		return ends[k], true
	}
	return time.Time{}, false
}

// Members returns a copy of the member contexts.
func (h *Hold) Members() []context.Context { return slices.Clone(h.members) }

// Release marks the hold released, stops watching its members, so that
// their release does not count as a loss, and cancels the composed context
// with cause ErrReleased: the caller gave the hold up, and its context ends
// before any member's release is sent. It reports false when the hold was
// released before.
func (h *Hold) Release() bool {
	if !h.released.CompareAndSwap(false, true) {
		return false
	}
	h.stop()
	h.cancel(core.ErrReleased)
	return true
}

// SameClient returns, for each locker that shares the Client of an earlier
// one (the same locker twice, or two handles of the name made by one
// Client), an error wrapping ErrInvalidArgument: Redlock's members stand
// for independent masters, and members of one Client are one connection to
// one deployment, which would grant a fake quorum. Lockers distsync did not
// make are not checked.
func SameClient[L any](lockers []L) []error {
	var errs []error
	first := map[*core.Core]int{}
	for i, lk := range lockers {
		c := coreOf(lk)
		if c == nil {
			continue
		}
		if j, ok := first[c]; ok {
			errs = append(errs, fmt.Errorf("%w: lockers %d and %d share one Client; make each member with the Client of its own master", core.ErrInvalidArgument, j, i))
			continue
		}
		first[c] = i
	}
	return errs
}

// coreOf returns the Core of a handle distsync made (a pointer to a struct
// with a *core.Core field, or a struct field with one, as a mutex's
// acquire.Handle, or whose first pointer-to-struct field leads to one, as a
// read-write lock's side leads to its lock), or nil.
func coreOf(v any) *core.Core {
	coreType := reflect.TypeFor[*core.Core]()
	rv := reflect.ValueOf(v)
	for range 3 {
		if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
			return nil
		}
		rv = rv.Elem()
		var next reflect.Value
		for i := range rv.NumField() {
			f := rv.Field(i)
			if f.Type() == coreType {
				return (*core.Core)(f.UnsafePointer())
			}
			if f.Kind() == reflect.Struct {
				for j := range f.NumField() {
					if g := f.Field(j); g.Type() == coreType {
						return (*core.Core)(g.UnsafePointer())
					}
				}
			}
			if !next.IsValid() && f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.Struct {
				next = f
			}
		}
		if !next.IsValid() {
			return nil
		}
		rv = next
	}
	return nil
}
