package distsync

import (
	"context"
	"log/slog"

	"github.com/distsync/distsync/observe"
)

// Observer receives what a Client's locks and semaphores do, for metrics
// and traces: set it in Options.Observer (the module
// github.com/distsync/distsync/otel adapts it to OpenTelemetry). Every hook
// is optional; a Client without an Observer pays one nil check per event.
//
// Hooks are called synchronously and never while distsync holds a lock of
// its own, so a hook may call back into distsync. They run on the goroutine
// that acquires or releases, on the watchdog's goroutine (Renewed), on one
// the watchdog starts for the leases a renewal found lost (Lost; Close waits
// for it at most a second), or on a timer's (Lost for an explicit lease that
// ran out), and may be called concurrently: a hook must be fast and must not
// block, since a slow Renewed delays the renewal of every lease of the
// Client. A hook that panics is recovered and logged through
// Options.Logger, and what distsync was doing goes on as if it had returned.
//
// Every granted
// acquisition of a lock or of a PermitSemaphore's permit (each permit is
// one) ends in exactly one Released or Lost; a counting Semaphore's permits
// belong to nobody, so only their acquisitions are reported.
type Observer struct {
	// Acquired is called when Lock, TryLock or a semaphore's Acquire or
	// TryAcquire returns, granted or not; ctx is the one passed to it. It
	// is not called for an invalid argument or after Close.
	Acquired func(ctx context.Context, info AcquireInfo)
	// Released is called when the first release of an acquisition returns:
	// Unlock (Release for a permit), or the release distsync makes when the
	// context the acquisition was made on ends; ctx is the release's. A
	// permit of this Client returned by ReleaseID is reported too.
	Released func(ctx context.Context, info ReleaseInfo)
	// Renewed is called after each batch of watchdog renewals.
	Renewed func(info RenewInfo)
	// Lost is called when an acquisition ends without a release: its lease
	// was lost, its explicit lease ran out, or the Client was closed.
	Lost func(info LostInfo)
}

// What the Observer's hooks receive, declared in package observe.
type (
	// AcquireInfo describes one acquisition attempt, granted or not.
	AcquireInfo = observe.AcquireInfo
	// ReleaseInfo describes the release of one acquisition.
	ReleaseInfo = observe.ReleaseInfo
	// RenewInfo describes one batch of watchdog renewals.
	RenewInfo = observe.RenewInfo
	// RenewKind is the part of a batch of renewals of one kind of primitive.
	RenewKind = observe.RenewKind
	// LostInfo describes an acquisition that ended without a release.
	LostInfo = observe.LostInfo
)

// observer adapts an Observer to the library's call sites.
type observer struct {
	o   Observer
	log *slog.Logger
}

// guard recovers a panic of the hook named hook.
func (a *observer) guard(hook string) {
	if r := recover(); r != nil {
		a.log.Error("distsync: Observer hook panicked", "hook", hook, "panic", r)
	}
}

func (a *observer) Acquired(ctx context.Context, i AcquireInfo) {
	if a.o.Acquired != nil {
		defer a.guard("Acquired")
		a.o.Acquired(ctx, i)
	}
}

func (a *observer) Released(ctx context.Context, i ReleaseInfo) {
	if a.o.Released != nil {
		defer a.guard("Released")
		a.o.Released(ctx, i)
	}
}

func (a *observer) Lost(i LostInfo) {
	if a.o.Lost != nil {
		defer a.guard("Lost")
		a.o.Lost(i)
	}
}

func (a *observer) renewed(i RenewInfo) {
	defer a.guard("Renewed")
	a.o.Renewed(i)
}
