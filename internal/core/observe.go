package core

import (
	"context"
	"time"
)

// Observer is told what acquisitions do: the Client adapts Options.Observer
// to it (and recovers a panicking hook). Config.Observer is nil when nobody
// observes, and every call site checks that first. Call sites hold no lock
// of their own: an observer may call back into distsync.
type Observer interface {
	// Acquired ends every acquisition that reached the wait loop, granted
	// (err nil) or not; ctx is the caller's.
	Acquired(ctx context.Context, i AcquireInfo)
	// Released follows the first release of an acquisition (Unlock, or the
	// release made when its parent context ended), with that attempt's
	// outcome.
	Released(ctx context.Context, i ReleaseInfo)
	// Lost follows the end of an acquisition without a release: its lease
	// was lost, its explicit lease ran out, or the Client was closed.
	Lost(i LostInfo)
}

// AcquireInfo is one acquisition as the observer sees it (distsync.AcquireInfo).
type AcquireInfo struct {
	Kind      string
	Side      string
	Name      string
	Start     time.Time
	Wait      time.Duration
	Contended bool
	TakeOver  bool
	Token     int64
	Err       error
}

// ReleaseInfo is one release (distsync.ReleaseInfo).
type ReleaseInfo struct {
	Kind  string
	Side  string
	Name  string
	Start time.Time
	Held  time.Duration
	Auto  bool
	Err   error
}

// LostInfo is one end of an acquisition without a release (distsync.LostInfo).
type LostInfo struct {
	Kind  string
	Side  string
	Name  string
	Held  time.Duration
	Cause error
}
