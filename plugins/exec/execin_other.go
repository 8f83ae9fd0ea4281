//go:build !linux

package exec

import (
	"context"

	"github.com/gpulayer/gpulayer/sdk/executor"
)

// Exec is Linux-only: entering a task's namespaces needs setns.
func (e *Executor) Exec(context.Context, executor.ExecRequest, executor.ExecStreams) (int, error) {
	return -1, executor.ErrExecUnsupported
}
