//go:build unix && !linux

package main

import "syscall"

// commandAttr: there is no parent-death signal outside Linux. COMMAND
// outlives a guard killed on its own (distsync then kills the group; if
// distsync is killed at the same moment, COMMAND keeps running).
func commandAttr() *syscall.SysProcAttr { return nil }
