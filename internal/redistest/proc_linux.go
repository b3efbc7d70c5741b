package redistest

import "syscall"

// sysProcAttr makes the kernel kill the server when the test binary dies, so
// that a crashed or timed-out test does not leave servers behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
