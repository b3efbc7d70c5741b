package distsync

import (
	"context"
	"log/slog"
	"time"

	"github.com/distsync/distsync/internal/core"
	"github.com/distsync/distsync/internal/renewal"
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

// AcquireInfo describes one acquisition attempt, granted or not.
type AcquireInfo struct {
	// Kind is the primitive's kind, a Kind constant (never KindLatch: a
	// latch has no acquisitions); Side is a read-write lock's side,
	// SideRead or SideWrite, and "" for other kinds; Name is the
	// primitive's name.
	Kind Kind
	Side string
	Name string
	// Start is when the call began to try; Wait is how long it took until
	// it was granted or gave up.
	Start time.Time
	Wait  time.Duration
	// Contended reports whether the call found the primitive held (or, for
	// a semaphore, with too few permits): an attempt was refused, so the
	// caller waited or, with no wait budget, was turned away; or ForceLock
	// took the lock over (TakeOver).
	Contended bool
	// TakeOver reports a Mutex.ForceLock that replaced another owner's
	// hold (not one that found the lock free, nor a re-entry).
	TakeOver bool
	// Token is the fencing token of a granted lock; 0 for semaphores and
	// when not granted.
	Token int64
	// Err is nil when granted; otherwise what the call returned (wrapping
	// ErrNotAcquired when the wait budget was spent, ctx.Err() when ctx
	// ended first).
	Err error
}

// ReleaseInfo describes the release of one acquisition.
type ReleaseInfo struct {
	// Kind, Side and Name are as in AcquireInfo.
	Kind Kind
	Side string
	Name string
	// Start is when the release began: the call of Unlock (or Release), or
	// when distsync began to release on its own. The release took from
	// Start until the hook was called.
	Start time.Time
	// Held is how long the acquisition was held: from its grant until its
	// release was asked for.
	Held time.Duration
	// Auto is true when distsync released it because the context it was
	// acquired on ended.
	Auto bool
	// Err is nil when the release was applied; it wraps ErrNotHeld when the
	// server no longer held the acquisition (its lease had ended), and is
	// the failure when no attempt got an answer.
	Err error
}

// RenewInfo describes one batch of watchdog renewals.
type RenewInfo struct {
	// Leases is how many leases the batch renewed or tried to renew.
	Leases int
	// Latency is the time from sending the batch to its last reply.
	Latency time.Duration
	// Failed counts the renewals that did not extend their lease: failed
	// on the network (retried until the lease's deadline) or found the
	// lease gone.
	Failed int
	// Lost counts the leases the batch found lost; Lost is called for each
	// acquisition of them.
	Lost int
	// ByKind splits Leases and Failed by the kind of primitive, in the
	// order the kinds first appear in the batch.
	ByKind []RenewKind
}

// RenewKind is the part of a batch of renewals of one kind of primitive.
type RenewKind struct {
	// Kind is the primitive's kind (a Kind constant).
	Kind Kind
	// Leases and Failed are as in RenewInfo, for this kind.
	Leases int
	Failed int
}

// LostInfo describes an acquisition that ended without a release.
type LostInfo struct {
	// Kind, Side and Name are as in AcquireInfo.
	Kind Kind
	Side string
	Name string
	// Start is when the release began: the call of Unlock (or Release), or
	// when distsync began to release on its own. The release took from
	// Start until the hook was called.
	Start time.Time
	// Held is how long the acquisition was held, from its grant.
	Held time.Duration
	// Cause wraps ErrLeaseLost (the lease was found gone, taken, or not
	// renewed in time), ErrLeaseExpired (an explicit lease ran out) or
	// ErrClosed (the Client was closed while it was held).
	Cause error
}

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

func (a *observer) Acquired(ctx context.Context, i core.AcquireInfo) {
	if a.o.Acquired != nil {
		defer a.guard("Acquired")
		a.o.Acquired(ctx, AcquireInfo{
			Kind: Kind(i.Kind), Side: i.Side, Name: i.Name, Start: i.Start, Wait: i.Wait,
			Contended: i.Contended, TakeOver: i.TakeOver, Token: i.Token, Err: i.Err,
		})
	}
}

func (a *observer) Released(ctx context.Context, i core.ReleaseInfo) {
	if a.o.Released != nil {
		defer a.guard("Released")
		a.o.Released(ctx, ReleaseInfo{Kind: Kind(i.Kind), Side: i.Side, Name: i.Name, Start: i.Start, Held: i.Held, Auto: i.Auto, Err: i.Err})
	}
}

func (a *observer) Lost(i core.LostInfo) {
	if a.o.Lost != nil {
		defer a.guard("Lost")
		a.o.Lost(LostInfo{Kind: Kind(i.Kind), Side: i.Side, Name: i.Name, Held: i.Held, Cause: i.Cause})
	}
}

func (a *observer) renewed(b renewal.Batch) {
	defer a.guard("Renewed")
	ri := RenewInfo{Leases: b.Leases, Latency: b.Latency, Failed: b.Failed, Lost: b.Lost, ByKind: make([]RenewKind, len(b.ByKind))}
	for i, k := range b.ByKind {
		ri.ByKind[i] = RenewKind{Kind: Kind(k.Kind), Leases: k.Leases, Failed: k.Failed}
	}
	a.o.Renewed(ri)
}
