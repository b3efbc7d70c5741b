package mutex

// SetAfterUnlock makes every unlock that the server applied report the error
// f returns, as if the reply were lost; it returns a function that undoes it.
func SetAfterUnlock(f func() error) (restore func()) {
	afterUnlock.Store(&f)
	return func() { afterUnlock.Store(nil) }
}

// ControlUp reports whether m's Client listens to its control channel.
func ControlUp(m *Mutex) bool { return m.c.ControlUp() }
