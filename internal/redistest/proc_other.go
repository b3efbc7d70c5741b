//go:build !linux

package redistest

import "syscall"

// sysProcAttr has no parent-death signal outside Linux; servers are stopped
// by tb.Cleanup and Main.
func sysProcAttr() *syscall.SysProcAttr { return nil }
