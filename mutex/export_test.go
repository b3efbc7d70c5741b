package mutex

import "time"

// ControlUp reports whether m's Client listens to its control channel.
func ControlUp(m *Mutex) bool { return m.h.Core.ControlUp() }

// Tune sets the hand-off settings of m's Client, core.Config.StarveAfter
// and HandoffLease (a negative value keeps the Client's): call it before
// the Client's first call, or between calls.
func Tune(m *Mutex, starveAfter, handoffLease time.Duration) {
	if starveAfter >= 0 {
		m.h.Core.StarveAfter = starveAfter
	}
	if handoffLease >= 0 {
		m.h.Core.HandoffLease = handoffLease
	}
}
