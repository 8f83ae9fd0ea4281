//go:build unix

package exec

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/gpulayer/gpulayer/sdk/executor"
)

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

// signalGroup sends sig to the process group led by pid. A group that is
// already gone is not an error.
func signalGroup(pid int, sig syscall.Signal) error {
	err := syscall.Kill(-pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// exitResult reads the exit code from a finished process: its own code,
// or 128+signal with a Reason naming the signal.
func exitResult(state *os.ProcessState) executor.Result {
	ws, ok := state.Sys().(syscall.WaitStatus)
	if !ok {
		return executor.Result{ExitCode: state.ExitCode()}
	}
	if ws.Signaled() {
		sig := ws.Signal()
		res := executor.Result{ExitCode: 128 + int(sig), Reason: "killed by signal " + signalName(sig)}
		if ws.CoreDump() {
			res.Reason += " (core dumped)"
		}
		return res
	}
	return executor.Result{ExitCode: ws.ExitStatus()}
}

var signalNames = map[syscall.Signal]string{
	syscall.SIGHUP:  "SIGHUP",
	syscall.SIGINT:  "SIGINT",
	syscall.SIGQUIT: "SIGQUIT",
	syscall.SIGILL:  "SIGILL",
	syscall.SIGTRAP: "SIGTRAP",
	syscall.SIGABRT: "SIGABRT",
	syscall.SIGBUS:  "SIGBUS",
	syscall.SIGFPE:  "SIGFPE",
	syscall.SIGKILL: "SIGKILL",
	syscall.SIGUSR1: "SIGUSR1",
	syscall.SIGSEGV: "SIGSEGV",
	syscall.SIGUSR2: "SIGUSR2",
	syscall.SIGPIPE: "SIGPIPE",
	syscall.SIGALRM: "SIGALRM",
	syscall.SIGTERM: "SIGTERM",
	syscall.SIGXCPU: "SIGXCPU",
	syscall.SIGXFSZ: "SIGXFSZ",
	syscall.SIGSYS:  "SIGSYS",
}

// signalName names sig the way operators know it ("SIGTERM").
func signalName(sig syscall.Signal) string {
	if n, ok := signalNames[sig]; ok {
		return n
	}
	return fmt.Sprintf("signal %d", int(sig))
}
