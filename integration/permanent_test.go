package integration

import (
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// A task whose command does not exist on the node fails at once, on its
// first attempt, saying why, instead of using up its attempts on the same
// error (the README's `nvidia-smi -L` on a machine without it). A command
// that exists and exits non-zero is still the task's own result.
func TestMissingCommandFailsWithoutRetries(t *testing.T) {
	h := startCoordinator(t)
	admin := h.Client(t, h.AdminToken)
	startAgent(t, h.URL, h.JoinToken, "node", "dgxh100")
	job, err := admin.SubmitJob(t.Context(), api.JobSpec{Executor: "exec", MaxAttempts: 3,
		Config: []byte(`{"command":"gpulayer-no-such-command","args":["-L"]}`)})
	if err != nil {
		t.Fatal(err)
	}
	done := waitJob(t, admin, job.ID, func(j api.Job) bool { return j.Tasks[0].State == api.TaskFailed }, "the task to fail")
	tk := done.Tasks[0]
	if len(tk.Attempts) != 1 || !strings.Contains(tk.Reason, "not found") || !strings.Contains(tk.Reason, "not retried") {
		t.Fatalf("task failed after %d attempts: %q; want one attempt, the reason, and that it was not retried", len(tk.Attempts), tk.Reason)
	}
}
