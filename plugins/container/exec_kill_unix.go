//go:build unix

package container

import (
	"context"
	"syscall"
)

// killExec ends an exec whose caller went away. The daemon has no call
// to kill one exec alone: its process is killed by its pid, which the
// daemon reports as the host sees it (this executor runs on the daemon's
// host, as root).
func killExec(eng engine, id string) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	if ins, err := eng.ContainerExecInspect(ctx, id); err == nil && ins.Running && ins.Pid > 0 {
		_ = syscall.Kill(ins.Pid, syscall.SIGKILL)
	}
}
