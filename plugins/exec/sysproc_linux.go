package exec

import "syscall"

// sysProcAttr puts the task in its own process group and has the kernel
// kill it if the plugin process dies, so a crashed plugin leaves no
// orphans holding GPUs.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
