package distsync

import (
	"github.com/distsync/distsync/election"
	"github.com/distsync/distsync/internal/core"
)

// Election returns the leader election called name: candidates Campaign in
// arrival order, one leads at a time, and its term is a fencing token. It
// makes no I/O; an invalid name returns ErrInvalidName, and a Client that
// was closed ErrClosed.
func (c *Client) Election(name string) (*election.Election, error) {
	return core.Make[*election.Election](c.cc(), core.KindElection, name)
}
