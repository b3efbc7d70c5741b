package main

import "syscall"

// commandAttr gives COMMAND a parent-death signal: SIGKILL when the guard's
// thread that started it ends (the guard locks it for its whole life).
func commandAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
