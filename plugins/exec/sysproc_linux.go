package exec

import (
	"syscall"

	"github.com/gpulayer/gpulayer/sdk/executor"
)

// sysProcAttr puts the task in its own process group, has the kernel kill
// it if the plugin process dies (so a crashed plugin leaves no orphans
// holding GPUs), and runs it as the user Task.Env names, with no
// supplementary groups.
func sysProcAttr(t executor.Task) (*syscall.SysProcAttr, error) {
	cred, err := credential(t)
	if err != nil {
		return nil, err
	}
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: cred}, nil
}
