package distsync

import (
	"github.com/distsync/distsync/fairlock"
	"github.com/distsync/distsync/internal/core"
)

// FairLock returns the reentrant fair lock called name, which grants in
// arrival order across processes. It makes no I/O; an invalid name returns
// ErrInvalidName, and a Client that was closed ErrClosed.
func (c *Client) FairLock(name string) (*fairlock.FairLock, error) {
	return core.Make[*fairlock.FairLock](c.cc(), "fairlock", name)
}
