package distsync

// NotifierStats returns how many pub/sub messages the Client's notifier has
// received and how many local waiters they woke, since the Client was made:
// a measure of wake-up traffic for tests and benchmarks (a fair lock's
// release wakes one waiter, a mutex's every local waiter).
func (c *Client) NotifierStats() (messages, wakes int64) {
	s := c.notifier.Stats()
	return s.Messages.Load(), s.Wakes.Load()
}
