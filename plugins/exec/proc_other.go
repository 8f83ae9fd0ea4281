//go:build !unix

package exec

import (
	"errors"
	"os"
	"syscall"

	"github.com/gpulayer/gpulayer/sdk/executor"
)

// Without process groups, signals go to the main process only.
const (
	sigTerm = syscall.Signal(15)
	sigKill = syscall.Signal(9)
)

// sysProcAttr cannot switch users here: a task that must run as another
// user is refused.
func sysProcAttr(t executor.Task) (*syscall.SysProcAttr, error) {
	if _, _, ok, err := executor.TaskUser(t); ok || err != nil {
		return nil, errors.New("exec: this platform cannot run a task as another user")
	}
	return nil, nil
}

func signalGroup(pid int, _ syscall.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return nil
	}
	return p.Kill()
}

func exitResult(state *os.ProcessState) executor.Result {
	return executor.Result{ExitCode: state.ExitCode()}
}
