package exec_test

import (
	"testing"

	"github.com/gpulayer/gpulayer/plugins/exec"
	"github.com/gpulayer/gpulayer/sdk/executor"
	"github.com/gpulayer/gpulayer/sdk/executor/executortest"
)

// A command that does not exist on the node fails the start permanently:
// no retry on this node could find it.
func TestMissingCommandIsPermanent(t *testing.T) {
	e := exec.New(exec.Options{})
	task := executortest.NewTask(t, cfg(exec.Config{Command: "gpulayer-no-such-command"}))
	err := e.Start(t.Context(), task)
	if !executor.IsPermanent(err) {
		t.Fatalf("Start = %v, want a permanent error", err)
	}
}
