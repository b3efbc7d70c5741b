package redlock

// WaitPending waits for the releases still running in the background (late
// answers of masters that did not answer in their round or wait, and the
// grants of waits a round superseded) and for the waits still under way.
func (l *Lock) WaitPending() { l.pending.Wait() }
