package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// span is one attempt's time on its worker, from assignment to end.
type span struct{ from, to time.Time }

// attemptSpans lists the spans of a job's attempts.
func attemptSpans(t *testing.T, j api.Job) []span {
	t.Helper()
	var out []span
	for _, tk := range j.Tasks {
		for _, a := range tk.Attempts {
			from, err1 := api.ParseTime(a.AssignedAt)
			to, err2 := api.ParseTime(a.EndedAt)
			if err1 != nil || err2 != nil {
				t.Fatalf("task %s attempt %d: assigned %q ended %q", tk.ID, a.Number, a.AssignedAt, a.EndedAt)
			}
			out = append(out, span{from, to})
		}
	}
	return out
}

// mostAtOnce is the most spans (half open: [from, to)) that overlap.
func mostAtOnce(spans []span) int {
	most := 0
	for _, s := range spans {
		n := 0
		for _, o := range spans {
			if !o.from.After(s.from) && o.to.After(s.from) {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

// Through a real agent with eight GPUs: a job of 5 one-GPU tasks with
// parallelism 2 never has more than two attempts on the worker at once
// (the coordinator's own assignment and end times), and each task sees
// its index and the count; a job that depends on it starts only after
// its last task ended, and one that needs it to fail is cancelled.
func TestParallelismAndDependenciesThroughAnAgent(t *testing.T) {
	h := startCoordinator(t)
	admin := h.Client(t, h.AdminToken)
	startAgent(t, h.URL, h.JoinToken, "node-flow", "dgxh100")
	ctx := t.Context()

	spec := execSpec(`echo "task=$GPULAYER_TASK_INDEX/$GPULAYER_TASK_COUNT"; sleep 0.3`, 1)
	two := 2
	spec.Count, spec.Parallelism = 5, &two
	first, err := admin.SubmitJob(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	after := execSpec(`echo after`, 0)
	after.DependsOn = []api.Dependency{{Job: first.ID, Condition: api.DependSucceeded}}
	next, err := admin.SubmitJob(ctx, after)
	if err != nil {
		t.Fatal(err)
	}
	never := execSpec(`echo never`, 0)
	never.DependsOn = []api.Dependency{{Job: first.ID, Condition: api.DependFailed}}
	onFail, err := admin.SubmitJob(ctx, never)
	if err != nil {
		t.Fatal(err)
	}

	j := waitJob(t, admin, first.ID, terminal, "the parallel job to end")
	if j.State != api.TaskSucceeded {
		t.Fatalf("parallel job ended %s", j.State)
	}
	if n := mostAtOnce(attemptSpans(t, j)); n != 2 {
		t.Fatalf("at most %d attempts overlapped, want 2 (parallelism 2, eight free GPUs)", n)
	}
	out := logsOf(t, admin, first.ID)
	for i := range 5 {
		if want := fmt.Sprintf("task=%d/5", i); !strings.Contains(out, want) {
			t.Fatalf("logs lack %q:\n%s", want, out)
		}
	}
	lastEnd := time.Time{}
	for _, s := range attemptSpans(t, j) {
		if s.to.After(lastEnd) {
			lastEnd = s.to
		}
	}

	n := waitJob(t, admin, next.ID, terminal, "the dependent job to end")
	if n.State != api.TaskSucceeded {
		t.Fatalf("dependent job ended %s", n.State)
	}
	if s := attemptSpans(t, n); len(s) != 1 || s[0].from.Before(lastEnd) {
		t.Fatalf("dependent attempts %+v; it must start after %v", s, lastEnd)
	}
	f, err := admin.Job(ctx, onFail.ID)
	if err != nil {
		t.Fatal(err)
	}
	if f.State != api.TaskCancelled || !strings.Contains(f.Tasks[0].Reason, "dependency "+first.ID) || len(f.Tasks[0].Attempts) != 0 {
		t.Fatalf("job waiting for a failure: %s, reason %q, %d attempts", f.State, f.Tasks[0].Reason, len(f.Tasks[0].Attempts))
	}
}
