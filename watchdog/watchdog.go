// Package watchdog is what a user sets and sees of a Client's lease
// watchdog: its settings (Config, in distsync.Options.Watchdog) and its
// statistics (Stats, in distsync.Client.Stats). The watchdog itself runs
// inside the Client: nothing outside distsync can stop or feed it.
//
// A hold taken without an explicit lease gets Config.Lease (30 s by default)
// and is renewed Config.Interval (Lease/3) after the request that last
// extended it, in pipelined batches of up to Config.BatchSize renewals, until
// it is released: mutex, fair lock, read and write holds, permits of the
// permit-expiring semaphore and leaderships. A lease with an explicit length
// is never renewed. A renewal that finds the lease gone cancels the holder's
// context at once; one that fails on the network is retried until the
// lease's deadline: the send of the last confirmed renewal plus the lease,
// less 1% + 2 ms for clock drift and Config.SafetyMargin for scheduling
// delay, by this process's clock. A local timer ends the hold at that
// deadline whatever its renewals are doing, so the holder learns of the loss
// before the server can grant the lock to anyone else. Either way the cause
// wraps distsync.ErrLeaseLost.
//
// How it works: docs/how-it-works.md#leases-and-the-watchdog.
package watchdog

import (
	"time"

	"github.com/distsync/distsync/internal/renewal"
)

// Defaults of Config.
const (
	DefaultLease         = 30 * time.Second
	DefaultBatchSize int = renewal.BatchSize
	// DefaultSafetyMargin: a process with a few goroutines more than CPUs
	// runs a timer's goroutine some tens of milliseconds late.
	DefaultSafetyMargin = 100 * time.Millisecond
)

// Config is what a user sets of a Client's watchdog
// (distsync.Options.Watchdog). The zero value of each field means its
// default; a value out of range makes distsync.New return an error wrapping
// distsync.ErrInvalidArgument.
type Config struct {
	// Lease is the watchdog lease: the lease of every hold taken without an
	// explicit one, renewed until it is released. Default DefaultLease; at
	// least distsync.MinLease.
	Lease time.Duration
	// Interval is how long after the request that last extended a lease
	// the watchdog renews it. Default Lease/3; from 1 ms to Lease/2, so that
	// a renewal that failed is retried before the lease ends.
	Interval time.Duration
	// BatchSize is the most renewals sent in one pipelined round trip.
	// Default DefaultBatchSize.
	BatchSize int
	// SafetyMargin is how much earlier than its end, by this process's
	// clock, a holder's context ends when no renewal is confirmed: a
	// renewed lease ends at the send of its last confirmed renewal plus
	// the lease, less the drift margin (1% + 2 ms) and the safety margin,
	// by a local timer. An explicit lease ends so too, from its grant or
	// its last confirmed Extend. It covers the scheduling delay of a busy process
	// (a timer's goroutine waiting for a CPU, a GC pause), so that the
	// context has ended before the server can grant the lock to anyone
	// else. A lease shorter than four margins uses a quarter of itself.
	// Default DefaultSafetyMargin; at most Lease/4.
	SafetyMargin time.Duration
}

// Stats is a snapshot of what a Client's watchdog did since the Client was
// made (distsync.Client.Stats embeds it). It is a copy; reading it changes
// nothing.
type Stats struct {
	// HeldLeases is how many holds the watchdog renews now.
	HeldLeases int
	// Renewals counts the renewal scripts sent, RenewalRoundTrips the
	// pipelined batches that carried them, Failures the renewals that did
	// not extend their lease (failed on the network, not acknowledged by
	// replicas, or found the lease gone), and LostLeases the leases
	// reported lost.
	Renewals, RenewalRoundTrips, Failures, LostLeases int64
	// Ticks counts the passes that renewed anything, and LastTick is how
	// long the last one took.
	Ticks    int64
	LastTick time.Duration
}
