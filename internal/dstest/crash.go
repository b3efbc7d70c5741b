package dstest

import "github.com/distsync/distsync"

// Crash stands for the death of c's process: its connection closes first,
// so Close cannot give its holds back (as it does on a clean shutdown), and
// they stay held on the server until their leases end.
func Crash(c *distsync.Client) {
	c.Rueidis().Close()
	c.Close()
}
