package core

import (
	"fmt"
	"sync"
)

// Maker makes the primitive of one kind called name on c; opts are the
// options the Client's factory method was given.
type Maker func(c *Core, name string, opts []any) (any, error)

var makers sync.Map // kind -> Maker

// Register records the Maker of kind: each primitive package registers its
// constructor at init, so that primitives are made only through the Client
// (the packages export no constructor that takes internal types).
func Register(kind string, m Maker) { makers.Store(kind, m) }

// Make makes the primitive of kind called name on c; after Close it makes
// none and returns an error wrapping ErrClosed.
func Make[T any](c *Core, kind, name string, opts ...any) (T, error) {
	var zero T
	if err := c.Closed(); err != nil {
		return zero, fmt.Errorf("%s %q: %w", kind, name, err)
	}
	m, ok := makers.Load(kind)
	if !ok {
		return zero, fmt.Errorf("distsync: no %s registered", kind)
	}
	p, err := m.(Maker)(c, name, opts)
	if err != nil {
		return zero, err
	}
	return p.(T), nil
}
