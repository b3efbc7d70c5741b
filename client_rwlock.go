package distsync

import "github.com/distsync/distsync/rwlock"

// RWLock returns the reentrant read-write lock called name; its Read and
// Write methods return the two lockers. Options such as rwlock.PreferWriters
// configure the handle. It makes no I/O; an invalid name returns
// ErrInvalidName.
func (c *Client) RWLock(name string, opts ...rwlock.Option) (*rwlock.RWLock, error) {
	return rwlock.New(c.core, name, opts...)
}
