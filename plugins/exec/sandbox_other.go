//go:build !linux

package exec

import (
	"log/slog"
	osexec "os/exec"

	"github.com/gpulayer/gpulayer/sdk/executor"
)

// sandboxUnavailable: the sandbox is built from Linux namespaces and
// cgroups.
func sandboxUnavailable() string { return "tasks get a sandbox on Linux only" }

// sandboxRefused is never reached outside Linux (sandboxUnavailable).
func sandboxRefused() string { return "" }

// hostMemoryBytes is not needed outside Linux (sandboxUnavailable).
func hostMemoryBytes() int64 { return 0 }

// sweepStaleCgroups: there are no cgroups outside Linux.
func sweepStaleCgroups(*slog.Logger, string) {}

// sandboxRun is never made outside Linux.
type sandboxRun struct{}

// startSandboxed is never called outside Linux (sandboxUnavailable).
func startSandboxed(*osexec.Cmd, string, *sandboxPlan, *slog.Logger) (*sandboxRun, error) {
	return nil, ErrSandbox
}

func (*sandboxRun) end() (executor.Result, bool) { return executor.Result{}, false }
