package distsync

import "github.com/distsync/distsync/fairlock"

// FairLock returns the reentrant fair lock called name, which grants in
// arrival order across processes. It makes no I/O; an invalid name returns
// ErrInvalidName.
func (c *Client) FairLock(name string) (*fairlock.FairLock, error) {
	return fairlock.New(c.core, name)
}
