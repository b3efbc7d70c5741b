package core

import (
	"fmt"
	"reflect"

	"github.com/distsync/distsync/observe"
)

// Maker makes the handle, of type T, of one kind of primitive called name
// on c.
type Maker[T any] func(c *Core, name string) (T, error)

// maker is a Maker of some handle type, as the registry keeps it.
type maker interface{ handle() reflect.Type }

func (Maker[T]) handle() reflect.Type { return reflect.TypeFor[T]() }

// makers holds each kind's Maker. Register writes it during package
// initialization only, so it is read without a lock afterwards.
var makers = map[observe.Kind]maker{}

// Register records the Maker of kind: each primitive package registers its
// constructor from an init function, so that primitives are made only
// through the Client (the packages export no constructor that takes
// internal types).
func Register[T any](kind observe.Kind, m Maker[T]) { makers[kind] = m }

// Make makes the primitive of kind called name on c; after Close it makes
// none and returns an error wrapping ErrClosed. A kind not registered, or
// registered with another handle type than T, is an error, not a panic.
func Make[T any](c *Core, kind observe.Kind, name string) (T, error) {
	var zero T
	if err := c.Closed(); err != nil {
		return zero, fmt.Errorf("%s %q: %w", kind, name, err)
	}
	r, ok := makers[kind]
	if !ok {
		return zero, fmt.Errorf("distsync: no %s registered", kind)
	}
	m, ok := r.(Maker[T])
	if !ok {
		return zero, fmt.Errorf("distsync: %s makes a %v, not a %v", kind, r.handle(), reflect.TypeFor[T]())
	}
	return m(c, name)
}
