package distsync

import (
	"github.com/distsync/distsync/internal/core"
	"github.com/distsync/distsync/rwlock"
)

// RWLock returns the reentrant read-write lock called name; its Read and
// Write methods return the two lockers. Options such as rwlock.PreferWriters
// configure the handle. It makes no I/O; an invalid name returns
// ErrInvalidName, and a Client that was closed ErrClosed.
func (c *Client) RWLock(name string, opts ...rwlock.Option) (*rwlock.RWLock, error) {
	o := make([]any, len(opts))
	for i, x := range opts {
		o[i] = x
	}
	return core.Make[*rwlock.RWLock](c.cc(), "rwlock", name, o...)
}
