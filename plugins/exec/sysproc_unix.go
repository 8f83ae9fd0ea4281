//go:build unix && !linux

package exec

import "syscall"

// sysProcAttr puts the task in its own process group.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
