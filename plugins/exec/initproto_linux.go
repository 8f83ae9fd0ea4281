package exec

import (
	"syscall"

	"github.com/gpulayer/gpulayer/sdk/executor"
)

// initSpec is what the executor hands the sandbox's init (as JSON on a
// pipe): the task's process and the sandbox around it.
type initSpec struct {
	Path string
	Args []string
	Env  []string
	Dir  string
	// Cred is the task's user; nil: the init's own (root).
	Cred *syscall.Credential
	Plan sandboxPlan
}

// initReport is what the init tells the executor (JSON lines on a second
// pipe): that the task's process runs, or why it could not start, and
// then how it ended.
type initReport struct {
	// Stage says what failed: "sandbox" (building the sandbox) or
	// "exec" (starting the program in it); Error says how.
	Stage string `json:",omitempty"`
	Error string `json:",omitempty"`
	// Started is set once the task's process runs.
	Started bool `json:",omitempty"`
	// Ended is set once it ended: with Signal (and Core) when a signal
	// killed it, with Code otherwise.
	Ended  bool `json:",omitempty"`
	Code   int  `json:",omitempty"`
	Signal int  `json:",omitempty"`
	Core   bool `json:",omitempty"`
}

// result turns an Ended report into a Result, as exitResult does for a
// process the executor waited for itself.
func (r initReport) result() executor.Result {
	if r.Signal == 0 {
		return executor.Result{ExitCode: r.Code}
	}
	sig := syscall.Signal(r.Signal)
	res := executor.Result{ExitCode: 128 + r.Signal, Reason: "killed by signal " + signalName(sig)}
	if r.Core {
		res.Reason += " (core dumped)"
	}
	return res
}
