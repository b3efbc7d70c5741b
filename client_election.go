package distsync

import (
	"github.com/distsync/distsync/election"
	"github.com/distsync/distsync/internal/core"
)

// ErrNoLeader is returned by an election's Leader when nobody leads.
var ErrNoLeader error = core.ErrNoLeader

// Election returns the leader election called name: candidates Campaign in
// arrival order, one leads at a time, and its term is a fencing token.
// opts give it a lease of its own (election.WithLease) and a liveness
// check (election.WithLiveness). It makes no I/O; an invalid name returns
// ErrInvalidName, an invalid option ErrInvalidArgument, and a Client that
// was closed ErrClosed.
func (c *Client) Election(name string, opts ...election.Option) (*election.Election, error) {
	args := make([]any, len(opts))
	for i, o := range opts {
		args[i] = o
	}
	return core.Make[*election.Election](c.cc(), core.KindElection, name, args...)
}
