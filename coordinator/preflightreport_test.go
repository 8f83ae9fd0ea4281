package coordinator_test

import (
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// An agent reports how an attempt's preflight went with its start or its
// fail, and GET /v1/jobs/{id} shows it on the attempt. A report that
// breaks its bounds or contradicts itself is refused with
// invalid_argument and changes nothing: the attempt stays assigned, with
// no preflight.
func TestPreflightReportIsShownOnTheAttempt(t *testing.T) {
	admin, worker, job, first := oneGPUTaskAssigned(t)
	ctx := t.Context()
	passed := api.PreflightReport{Outcome: api.PreflightPassed, DurationMS: 1834, BoundMS: 120000, Checks: 6, Skipped: 1}
	bad := func(edit func(*api.PreflightReport)) *api.PreflightReport {
		p := passed
		edit(&p)
		return &p
	}
	for name, p := range map[string]*api.PreflightReport{
		"an unknown outcome":      bad(func(p *api.PreflightReport) { p.Outcome = "maybe" }),
		"a failed one at a start": bad(func(p *api.PreflightReport) { p.Outcome, p.Failed = api.PreflightFailed, "GPU-a: matmul: slow" }),
		"a failed check, passed":  bad(func(p *api.PreflightReport) { p.Failed = "GPU-a: matmul: slow" }),
		"a negative duration":     bad(func(p *api.PreflightReport) { p.DurationMS = -1 }),
		"an overlong duration":    bad(func(p *api.PreflightReport) { p.DurationMS = api.MaxPreflightMS + 1 }),
		"an overlong bound":       bad(func(p *api.PreflightReport) { p.BoundMS = api.MaxPreflightMS + 1 }),
		"too many checks":         bad(func(p *api.PreflightReport) { p.Checks = api.MaxPreflightChecks + 1 }),
		"more skipped than run":   bad(func(p *api.PreflightReport) { p.Skipped = 7 }),
	} {
		err := worker.StartWith(ctx, first.ID, api.StartRequest{AttemptID: first.AttemptID, Preflight: p})
		if !client.IsCode(err, api.CodeInvalidArgument) {
			t.Errorf("start with %s: %v, want invalid_argument", name, err)
		}
	}
	for name, p := range map[string]*api.PreflightReport{
		"a failed one naming no check": {Outcome: api.PreflightFailed, Checks: 6},
		"an overlong failed check":     {Outcome: api.PreflightFailed, Checks: 6, Failed: strings.Repeat("x", api.MaxReasonBytes+1)},
	} {
		_, err := worker.Fail(ctx, first.ID, api.FailRequest{AttemptID: first.AttemptID, Reason: "preflight", GPUFault: first.Devices[0], Preflight: p})
		if !client.IsCode(err, api.CodeInvalidArgument) {
			t.Errorf("fail with %s: %v, want invalid_argument", name, err)
		}
	}
	attempt := func() api.Attempt {
		t.Helper()
		j, err := admin.Job(ctx, job.ID)
		if err != nil || len(j.Tasks) != 1 || len(j.Tasks[0].Attempts) == 0 {
			t.Fatalf("job %+v: %v", j, err)
		}
		as := j.Tasks[0].Attempts
		return as[len(as)-1]
	}
	if a := attempt(); a.State != api.TaskAssigned || a.Preflight != nil {
		t.Fatalf("after the refused reports the attempt is %s with %+v, want assigned and no preflight", a.State, a.Preflight)
	}
	if err := worker.StartWith(ctx, first.ID, api.StartRequest{AttemptID: first.AttemptID, Preflight: &passed}); err != nil {
		t.Fatal(err)
	}
	if a := attempt(); a.Preflight == nil || *a.Preflight != passed {
		t.Fatalf("the started attempt shows %+v, want %+v", a.Preflight, passed)
	}
	failed := api.PreflightReport{Outcome: api.PreflightFailed, DurationMS: 950, BoundMS: 120000, Checks: 3, Failed: "GPU " + first.Devices[0] + ": memory-pattern: 4 words read back wrong"}
	if _, err := worker.Fail(ctx, first.ID, api.FailRequest{AttemptID: first.AttemptID, Reason: "preflight failed", GPUFault: first.Devices[0], Preflight: &failed}); err != nil {
		t.Fatal(err)
	}
	if a := attempt(); a.State != api.AttemptLost || a.Preflight == nil || *a.Preflight != failed {
		t.Fatalf("the ended attempt is %s with %+v, want lost with %+v", a.State, a.Preflight, failed)
	}
	// The job's events tell it too: the preflight, its time against its
	// bound and the check that failed, before the attempt's end.
	evs, err := admin.JobEvents(ctx, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	var seen *api.PreflightReport
	for _, e := range evs.Events {
		kinds = append(kinds, e.Kind)
		if e.Kind == api.EventAttemptPreflight {
			seen = e.Preflight
		}
	}
	if seen == nil || *seen != failed || !strings.Contains(strings.Join(kinds, " "), api.EventAttemptPreflight+" "+api.EventAttemptStarted) {
		t.Fatalf("events %v carry preflight %+v, want %+v before the start", kinds, seen, failed)
	}
}

// oneGPUTaskAssigned starts a cluster with one two-GPU worker, submits a
// one-GPU job of one attempt and has the worker acquire its task.
func oneGPUTaskAssigned(t *testing.T) (admin, worker *client.Client, job api.Job, task *api.Assignment) {
	t.Helper()
	h := coordinatortest.Start(t, coordinatortest.Options{})
	admin = h.Client(t, h.AdminToken)
	worker = twoGPUWorker(t, h)
	job, err := admin.SubmitJob(t.Context(), api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`), MaxAttempts: 1, Resources: &api.Resources{GPUs: 1}})
	if err != nil {
		t.Fatal(err)
	}
	acq, err := worker.Acquire(t.Context(), api.AcquireRequest{WaitSeconds: 1})
	if err != nil || acq.Task == nil {
		t.Fatalf("acquire: %+v %v", acq, err)
	}
	return admin, worker, job, acq.Task
}
