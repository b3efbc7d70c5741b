package distsync

import (
	"time"

	"github.com/distsync/distsync/watchdog"
)

// Stats is a snapshot of a Client's counters since it was made: what its
// watchdog and its notifier did. It is a copy; reading it changes nothing.
type Stats struct {
	// Stats is what the watchdog did (its fields are promoted:
	// s.Renewals, s.HeldLeases, ...).
	watchdog.Stats
	// NotifierMessages counts the pub/sub messages received, and
	// NotifierWakes the local waiters they woke (a fair lock's release wakes
	// one waiter).
	NotifierMessages, NotifierWakes int64
}

// Stats returns a snapshot of the Client's counters.
func (c *Client) Stats() Stats {
	if c.cc() == nil {
		return Stats{}
	}
	w, n := c.watchdog.Stats(), c.notifier.Stats()
	return Stats{
		Stats: watchdog.Stats{
			HeldLeases:        c.watchdog.Len(),
			Renewals:          w.Renewals.Load(),
			RenewalRoundTrips: w.RoundTrips.Load(),
			Failures:          w.Failed.Load(),
			LostLeases:        w.Lost.Load(),
			Ticks:             w.Ticks.Load(),
			LastTick:          time.Duration(w.LastTick.Load()),
		},
		NotifierMessages: n.Messages.Load(),
		NotifierWakes:    n.Wakes.Load(),
	}
}
