package coordinator_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Every bad parallelism, depends_on, preemption grace or checkpoint gets its contract code and leaves
// the state as it was; a job of another team is not found, as if it did
// not exist. (A job cannot name itself over HTTP: its id is made by the
// submit; the state refuses it, TestDependencySubmitRefusals.)
func TestJobFlowRefusesBadInput(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	if _, err := admin.CreateTeam(ctx, api.CreateTeamRequest{Name: "vision"}); err != nil {
		t.Fatal(err)
	}
	sub := mintTeamClient(t, h, "sub", "vision", "submit")
	theirs, err := admin.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`)})
	if err != nil {
		t.Fatal(err)
	}
	ours, err := h.Client(t, sub).SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`)})
	if err != nil {
		t.Fatal(err)
	}
	many := make([]string, api.MaxDependencies+1)
	for i := range many {
		many[i] = fmt.Sprintf(`{"job":"j%d","condition":"finished"}`, i)
	}
	job := func(extra string) string {
		return `{"executor":"exec","config":{"command":"true"},` + extra + `}`
	}
	cases := []struct {
		name, body string
		status     int
		code       api.Code
	}{
		{"an unknown job", job(`"depends_on":[{"job":"jnope","condition":"succeeded"}]`), 404, api.CodeNotFound},
		{"another team's job", job(`"depends_on":[{"job":"` + theirs.ID + `","condition":"succeeded"}]`), 404, api.CodeNotFound},
		{"65 entries", job(`"depends_on":[` + strings.Join(many, ",") + `]`), 400, api.CodeInvalidArgument},
		{"a bad condition", job(`"depends_on":[{"job":"` + ours.ID + `","condition":"started"}]`), 400, api.CodeInvalidArgument},
		{"no condition", job(`"depends_on":[{"job":"` + ours.ID + `"}]`), 400, api.CodeInvalidArgument},
		{"no job", job(`"depends_on":[{"condition":"failed"}]`), 400, api.CodeInvalidArgument},
		{"a job listed twice", job(`"depends_on":[{"job":"` + ours.ID + `","condition":"failed"},{"job":"` + ours.ID + `","condition":"finished"}]`), 400, api.CodeInvalidArgument},
		{"an unknown field in an entry", job(`"depends_on":[{"job":"` + ours.ID + `","condition":"failed","after":1}]`), 400, api.CodeInvalidArgument},
		{"parallelism 0", job(`"count":2,"parallelism":0`), 400, api.CodeInvalidArgument},
		{"negative parallelism", job(`"count":2,"parallelism":-1`), 400, api.CodeInvalidArgument},
		{"parallelism over count", job(`"count":2,"parallelism":3`), 400, api.CodeInvalidArgument},
		{"parallelism not a number", job(`"count":2,"parallelism":"2"`), 400, api.CodeInvalidArgument},
		{"a gang with parallelism below count", job(`"count":4,"gang":true,"parallelism":2`), 400, api.CodeInvalidArgument},
		{"a negative preemption grace", job(`"preemption_grace_seconds":-1`), 400, api.CodeInvalidArgument},
		{"a preemption grace over 600 s", job(`"preemption_grace_seconds":601`), 400, api.CodeInvalidArgument},
		{"preemptible not a boolean", job(`"preemptible":"no"`), 400, api.CodeInvalidArgument},
		{"a checkpoint with no path", job(`"checkpoint":{}`), 400, api.CodeInvalidArgument},
		{"an absolute checkpoint path", job(`"checkpoint":{"path":"/etc"}`), 400, api.CodeInvalidArgument},
		{"a checkpoint path out of the task directory", job(`"checkpoint":{"path":"ckpt/../../x"}`), 400, api.CodeInvalidArgument},
		{"a checkpoint in the task's TMPDIR", job(`"checkpoint":{"path":"tmp/ckpt"}`), 400, api.CodeInvalidArgument},
		{"a checkpoint over an input", job(`"inputs":[{"sha256":"` + strings.Repeat("a", 64) + `","path":"ckpt/model.pt"}],"checkpoint":{"path":"ckpt"}`), 400, api.CodeInvalidArgument},
		{"an unknown checkpoint field", job(`"checkpoint":{"path":"ckpt","every":5}`), 400, api.CodeInvalidArgument},
	}
	for _, c := range cases {
		before := snapshot(t, h)
		wantCode(t, c.name, call(t, h.URL, "POST", "/v1/jobs", sub, []byte(c.body), nil), c.status, c.code)
		if !bytes.Equal(before, snapshot(t, h)) {
			t.Errorf("%s: a refused submit changed the state", c.name)
		}
	}
}

// Over HTTP: the job's answer shows both fields, a waiting job says what
// it waits for, and cancelling the job it waits for (condition
// succeeded) cancels it with a reason naming the dependency. An admin may
// depend on any team's job.
func TestJobFlowOverHTTP(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	if _, err := admin.CreateTeam(ctx, api.CreateTeamRequest{Name: "vision"}); err != nil {
		t.Fatal(err)
	}
	sub := h.Client(t, mintTeamClient(t, h, "sub", "vision", "submit", "read"))
	up, err := sub.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`)})
	if err != nil {
		t.Fatal(err)
	}
	two := 2
	down, err := sub.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`), Count: 3, Parallelism: &two,
		DependsOn: []api.Dependency{{Job: up.ID, Condition: api.DependSucceeded}}})
	if err != nil {
		t.Fatal(err)
	}
	if down.Parallelism == nil || *down.Parallelism != 2 || len(down.DependsOn) != 1 || down.DependsOn[0] != (api.Dependency{Job: up.ID, Condition: api.DependSucceeded}) {
		t.Fatalf("submit answer: parallelism %v, depends_on %+v", down.Parallelism, down.DependsOn)
	}
	got, err := sub.Job(ctx, down.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r := got.Tasks[0].PendingReason; !strings.Contains(r, up.ID) {
		t.Fatalf("pending reason %q does not name %s", r, up.ID)
	}
	// An admin's job may wait for a job of the vision team.
	if _, err := admin.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`), DependsOn: []api.Dependency{{Job: up.ID, Condition: api.DependFinished}}}); err != nil {
		t.Fatalf("admin depending on another team's job: %v", err)
	}
	if _, err := sub.CancelJob(ctx, up.ID); err != nil {
		t.Fatal(err)
	}
	got, err = sub.Job(ctx, down.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != api.TaskCancelled {
		t.Fatalf("dependent is %s after the job it waits for was cancelled", got.State)
	}
	if !strings.Contains(got.Reason, "dependency "+up.ID) { // PROTOCOL.md: the job is cancelled with a reason naming it
		t.Fatalf("job reason %q does not name the dependency", got.Reason)
	}
	for _, tk := range got.Tasks {
		if !strings.Contains(tk.Reason, "dependency "+up.ID) {
			t.Fatalf("task %s reason %q does not name the dependency", tk.ID, tk.Reason)
		}
	}
}

// The queueing fields a job may carry come back as submitted: not
// preemptible, a grace of 0 (an explicit zero, not absent) and a
// checkpoint path.
func TestPreemptionFieldsRoundTrip(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	c := h.Client(t, h.AdminToken)
	no, zero := false, 0
	j, err := c.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`),
		Preemptible: &no, PreemptionGraceSeconds: &zero, Checkpoint: &api.CheckpointSpec{Path: "ckpt"}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Job(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Preemptible == nil || *got.Preemptible || got.PreemptionGraceSeconds == nil || *got.PreemptionGraceSeconds != 0 ||
		got.Checkpoint == nil || got.Checkpoint.Path != "ckpt" {
		t.Fatalf("read back: preemptible %v, grace %v, checkpoint %+v", got.Preemptible, got.PreemptionGraceSeconds, got.Checkpoint)
	}
}
