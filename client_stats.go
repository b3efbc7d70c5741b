package distsync

import "time"

// Stats is a snapshot of a Client's counters since it was made: what its
// watchdog and its notifier did. It is a copy; reading it changes nothing.
type Stats struct {
	// HeldLeases is how many holds the watchdog renews now.
	HeldLeases int
	// Renewals counts renewal scripts sent, RenewalRoundTrips the pipelined
	// batches that carried them, WatchdogTicks the passes that renewed
	// anything, and LastTick how long the last pass took.
	Renewals, RenewalRoundTrips, WatchdogTicks int64
	LastTick                                   time.Duration
	// LostLeases counts leases the watchdog reported lost.
	LostLeases int64
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
		HeldLeases:        c.watchdog.Len(),
		Renewals:          w.Renewals.Load(),
		RenewalRoundTrips: w.RoundTrips.Load(),
		WatchdogTicks:     w.Ticks.Load(),
		LastTick:          time.Duration(w.LastTick.Load()),
		LostLeases:        w.Lost.Load(),
		NotifierMessages:  n.Messages.Load(),
		NotifierWakes:     n.Wakes.Load(),
	}
}
