package redlock

// WaitPending waits for the releases still running in the background (late
// answers of masters that did not answer in their round).
func (l *Lock) WaitPending() { l.pending.Wait() }
