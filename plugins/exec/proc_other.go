//go:build !unix

package exec

import (
	"os"
	"syscall"

	"github.com/gpulayer/gpulayer/sdk/executor"
)

// Without process groups, signals go to the main process only.
const (
	sigTerm = syscall.Signal(15)
	sigKill = syscall.Signal(9)
)

func sysProcAttr() *syscall.SysProcAttr { return nil }

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
