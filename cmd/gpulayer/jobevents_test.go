package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// The table names each event and, for a preemption, the preempting job
// and team; a truncated list says so.
func TestPrintJobEvents(t *testing.T) {
	zero, exit := 0, 143
	a := &api.EventAttempt{AttemptID: "a1", Number: 1, WorkerID: "gpu-1", Devices: []string{"GPU-0"}}
	ended := *a
	ended.Outcome, ended.ExitCode, ended.Reason = api.AttemptPreempted, &exit, "preempted by job j2 (team research) for its task t2"
	by := &api.Preemptor{JobID: "j2", Team: "research", TaskID: "t2"}
	evs := api.JobEvents{JobID: "j1", Truncated: true, Events: []api.JobEvent{
		{Time: "2026-12-07T03:00:00Z", Kind: api.EventJobSubmitted, By: "alice", Team: "ml"},
		{Time: "2026-12-07T03:00:01Z", Kind: api.EventAttemptAssigned, TaskID: "t1", TaskIndex: &zero, Attempt: a},
		{Time: "2026-12-07T03:05:00Z", Kind: api.EventAttemptPreempted, TaskID: "t1", TaskIndex: &zero, Attempt: a, PreemptedBy: by},
		{Time: "2026-12-07T03:05:07Z", Kind: api.EventAttemptEnded, TaskID: "t1", TaskIndex: &zero, Attempt: &ended, PreemptedBy: by},
	}}
	var b bytes.Buffer
	printJobEvents(&b, evs, true)
	out := b.String()
	for _, want := range []string{"older events left out", "job.submitted", "by alice (team ml)", "worker gpu-1 GPU-0",
		"attempt.preempted", "by job j2 (team research) for its task t2", "preempted; exit 143"} {
		if !strings.Contains(out, want) {
			t.Fatalf("the table lacks %q:\n%s", want, out)
		}
	}
}

// Against the real binary: a cancelled job's events list its submission
// and each task's cancellation; -o json is the API's answer; an unknown
// job is not found.
func TestJobEventsThroughTheCLI(t *testing.T) {
	env := startDev(t)
	r := run(t, env, "job", "submit", "--require", "label:zone=nowhere", "--", "true")
	if r.code != 0 {
		t.Fatalf("submit: exit %d\n%s", r.code, r.stderr)
	}
	id := strings.TrimSpace(r.stdout)
	if c := run(t, env, "job", "cancel", id); c.code != 0 {
		t.Fatalf("cancel: exit %d\n%s", c.code, c.stderr)
	}
	st := run(t, env, "job", "events", id)
	for _, want := range []string{"job.submitted", "task.cancelled"} {
		if !strings.Contains(st.stdout, want) {
			t.Fatalf("job events lacks %q:\n%s%s", want, st.stdout, st.stderr)
		}
	}
	var evs api.JobEvents
	if err := json.Unmarshal([]byte(run(t, env, "job", "events", id, "-o", "json").stdout), &evs); err != nil || evs.JobID != id || len(evs.Events) < 2 {
		t.Fatalf("json: %+v %v", evs, err)
	}
	if r := run(t, env, "job", "events", "nope"); r.code == 0 || !strings.Contains(r.stderr, "not_found") {
		t.Fatalf("unknown job: exit %d\n%s", r.code, r.stderr)
	}
}
