package proc

import "syscall"

// sysProcAttr kills the child if the benchmark dies first.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
