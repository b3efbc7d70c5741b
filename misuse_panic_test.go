package distsync_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/election"
	"github.com/distsync/distsync/fairlock"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/latch"
	"github.com/distsync/distsync/multilock"
	"github.com/distsync/distsync/mutex"
	"github.com/distsync/distsync/redlock"
	"github.com/distsync/distsync/rwlock"
	"github.com/distsync/distsync/semaphore"
)

// errNone stands for a nil error result in callEvery's report.
var errNone = errors.New("no error")

// callEvery calls every exported method of v with zero arguments (a
// background context for a context, a second for a duration, 1 for a
// count) and reports, for each, the panic it raised, the error it
// returned, errNone when its error result was nil, or nil when it has none.
func callEvery(v reflect.Value) map[string]any {
	out := map[string]any{}
	for i := range v.NumMethod() {
		m, name := v.Method(i), v.Type().Method(i).Name
		if name == "Close" {
			continue // returns nothing to check; called last by the caller
		}
		args := make([]reflect.Value, m.Type().NumIn())
		for j := range args {
			t := m.Type().In(j)
			switch {
			case t == reflect.TypeFor[context.Context]():
				args[j] = reflect.ValueOf(context.Background())
			case t == reflect.TypeFor[time.Duration]():
				args[j] = reflect.ValueOf(time.Second)
			case t.Kind() == reflect.Int64 || t.Kind() == reflect.Int:
				args[j] = reflect.ValueOf(1).Convert(t)
			case t.Kind() == reflect.String:
				args[j] = reflect.ValueOf("x")
			default:
				args[j] = reflect.Zero(t)
			}
		}
		func() {
			defer func() {
				if p := recover(); p != nil {
					out[name] = fmt.Errorf("panic: %v", p)
				}
			}()
			var res []reflect.Value
			if m.Type().IsVariadic() {
				res = m.CallSlice(args)
			} else {
				res = m.Call(args)
			}
			out[name] = nil
			for i, r := range res {
				if m.Type().Out(i) == reflect.TypeFor[error]() {
					out[name] = errNone // an error result, nil until set
					if err, _ := r.Interface().(error); err != nil {
						out[name] = err
					}
				}
			}
		}()
	}
	return out
}

// Misuse is a typed error, never a panic: every method of a nil or zero
// handle, a nil Client and a permit not made by Acquire returns an error
// wrapping ErrInvalidArgument (methods without an error return their zero
// values), and a Permit of another semaphore ErrNotHeld.
func TestMisuseIsATypedErrorNotAPanic(t *testing.T) {
	t.Parallel()
	var handles = []any{
		(*distsync.Client)(nil), &distsync.Client{},
		(*mutex.Mutex)(nil), &mutex.Mutex{},
		(*fairlock.FairLock)(nil), &fairlock.FairLock{},
		(*rwlock.RWLock)(nil), &rwlock.RWLock{},
		(*rwlock.Side)(nil), &rwlock.Side{},
		(*semaphore.Semaphore)(nil), &semaphore.Semaphore{},
		(*semaphore.PermitSemaphore)(nil), &semaphore.PermitSemaphore{},
		(*semaphore.Permit)(nil), &semaphore.Permit{},
		(*latch.Latch)(nil), &latch.Latch{},
		(*multilock.Lock)(nil), &multilock.Lock{},
		(*redlock.Lock)(nil), &redlock.Lock{},
		(*election.Election)(nil), &election.Election{},
	}
	for _, h := range handles {
		v := reflect.ValueOf(h)
		what := fmt.Sprintf("%T", h)
		if !v.IsNil() {
			what = "zero " + what
		}
		for name, res := range callEvery(v) {
			err, _ := res.(error)
			switch {
			case err == errNone:
				t.Errorf("%s.%s: no error", what, name)
			case err != nil && !errors.Is(err, distsync.ErrInvalidArgument) && !errors.Is(err, distsync.ErrNotHeld):
				t.Errorf("%s.%s: %v", what, name, err)
			}
		}
		if c, ok := h.(interface{ Close() }); ok {
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Errorf("%s.Close: panic: %v", what, p)
					}
				}()
				c.Close()
			}()
		}
	}

	// The real thing beside them: a permit not made by Acquire, and one of
	// another semaphore.
	c := dstest.Client(t)
	ctx := context.Background()
	s, err := c.PermitSemaphore(dstest.Name(t))
	must(t, err)
	for _, p := range []*semaphore.Permit{nil, {}} {
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("Release(%#v): panic: %v", p, p)
				}
			}()
			if err := s.Release(ctx, p); !errors.Is(err, distsync.ErrNotHeld) && !errors.Is(err, distsync.ErrInvalidArgument) {
				t.Errorf("Release(%#v): %v", p, err)
			}
		}()
	}
}
