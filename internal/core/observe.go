package core

import (
	"context"

	"github.com/distsync/distsync/observe"
)

// Observer is told what acquisitions do: the Client adapts Options.Observer
// to it (and recovers a panicking hook). Config.Observer is nil when nobody
// observes, and every call site checks that first. Call sites hold no lock
// of their own: an observer may call back into distsync.
type Observer interface {
	// Acquired ends every acquisition that reached the wait loop, granted
	// (err nil) or not; ctx is the caller's.
	Acquired(ctx context.Context, i observe.AcquireInfo)
	// Released follows the first release of an acquisition (Unlock, or the
	// release made when its parent context ended), with that attempt's
	// outcome.
	Released(ctx context.Context, i observe.ReleaseInfo)
	// Lost follows the end of an acquisition without a release: its lease
	// was lost, its explicit lease ran out, or the Client was closed.
	Lost(i observe.LostInfo)
}
