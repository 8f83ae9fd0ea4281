package coordinator_test

import (
	"slices"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// fleetWorker registers a worker and returns its client and token.
func fleetWorker(t *testing.T, h *coordinatortest.Harness, id string) (*client.Client, string) {
	t.Helper()
	reg, err := h.Client(t, h.JoinToken).Register(t.Context(), api.RegisterRequest{WorkerID: id, Capabilities: []string{"*"}, Executors: []string{"exec"}})
	if err != nil {
		t.Fatal(err)
	}
	return h.Client(t, reg.WorkerToken), reg.WorkerToken
}

// startOne submits a one-attempt job and has worker acquire and start it.
func startOne(t *testing.T, admin, worker *client.Client) api.Assignment {
	t.Helper()
	ctx := t.Context()
	if _, err := admin.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"sleep 60"}`), MaxAttempts: 1}); err != nil {
		t.Fatal(err)
	}
	acq, err := worker.Acquire(ctx, api.AcquireRequest{WaitSeconds: 5})
	if err != nil || acq.Task == nil {
		t.Fatalf("acquire: %+v %v", acq, err)
	}
	if err := worker.Start(ctx, acq.Task.ID, acq.Task.AttemptID); err != nil {
		t.Fatal(err)
	}
	return *acq.Task
}

// A drained worker is told so by heartbeat and acquire, gets nothing new,
// and at the deadline is asked to stop its task; the task is requeued
// without using up its one attempt, and runs again once the worker is
// resumed.
func TestDrainOverHTTP(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	worker, _ := fleetWorker(t, h, "node1")
	task := startOne(t, admin, worker)

	deadline := 1
	w, err := admin.DrainWorker(ctx, "node1", &deadline)
	if err != nil || w.Status != api.WorkerDraining || w.DrainDeadline == "" || w.DrainedBy != "admin" {
		t.Fatalf("drain: %+v %v", w, err)
	}
	acq, err := worker.Acquire(ctx, api.AcquireRequest{WaitSeconds: 1})
	if err != nil || acq.Task != nil || acq.Command != api.CommandDrain {
		t.Fatalf("acquire while draining: %+v %v", acq, err)
	}
	coordinatortest.WaitFor(t, 15*time.Second, "the heartbeat to ask for the task's stop at the deadline", func() bool {
		hb, err := worker.Heartbeat(ctx, api.HeartbeatRequest{RunningTaskIDs: []string{task.ID}})
		return err == nil && hb.Command == api.CommandDrain && slices.Contains(hb.CancelTaskIDs, task.ID)
	})
	if _, err := worker.Finish(ctx, task.ID, api.FinishRequest{AttemptID: task.AttemptID, ExitCode: 143}); err != nil {
		t.Fatal(err)
	}
	job, err := admin.Job(ctx, task.JobID)
	if err != nil || job.Tasks[0].State != api.TaskPending || job.Tasks[0].Attempts[0].State != api.AttemptPreempted {
		t.Fatalf("after the stop: %+v %v", job.Tasks, err)
	}

	if w, err := admin.ResumeWorker(ctx, "node1"); err != nil || w.Status != api.WorkerReady || w.DrainDeadline != "" {
		t.Fatalf("resume: %+v %v", w, err)
	}
	again, err := worker.Acquire(ctx, api.AcquireRequest{WaitSeconds: 5})
	if err != nil || again.Task == nil || again.Task.ID != task.ID {
		t.Fatalf("acquire after resume: %+v %v", again, err)
	}
	if err := worker.Start(ctx, again.Task.ID, again.Task.AttemptID); err != nil {
		t.Fatal(err)
	}
	if _, err := worker.Finish(ctx, task.ID, api.FinishRequest{AttemptID: again.Task.AttemptID, ExitCode: 0}); err != nil {
		t.Fatal(err)
	}
	if job, err := admin.Job(ctx, task.JobID); err != nil || job.State != api.TaskSucceeded {
		t.Fatalf("the job after its second attempt (of one allowed): %+v %v", job, err)
	}
}

// A stop asks at once, and says stop.
func TestStopOverHTTP(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	worker, _ := fleetWorker(t, h, "node1")
	task := startOne(t, admin, worker)
	if w, err := admin.StopWorker(ctx, "node1"); err != nil || w.Status != api.WorkerStopping {
		t.Fatalf("stop: %+v %v", w, err)
	}
	hb, err := worker.Heartbeat(ctx, api.HeartbeatRequest{RunningTaskIDs: []string{task.ID}})
	if err != nil || hb.Command != api.CommandStop || !slices.Equal(hb.CancelTaskIDs, []string{task.ID}) {
		t.Fatalf("heartbeat after stop: %+v %v", hb, err)
	}
	if acq, err := worker.Acquire(ctx, api.AcquireRequest{}); err != nil || acq.Command != api.CommandStop {
		t.Fatalf("acquire after stop: %+v %v", acq, err)
	}
}

// A worker that deregisters while idle is forgotten at once: its
// credential answers 401, an admin's read 404, and the audit log keeps it.
func TestDeregisterOverHTTP(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	worker, _ := fleetWorker(t, h, "leaving")
	if _, err := worker.Deregister(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := worker.Heartbeat(ctx, api.HeartbeatRequest{}); !client.IsCode(err, api.CodeUnauthenticated) {
		t.Fatalf("heartbeat of a deregistered worker: %v, want unauthenticated", err)
	}
	if _, err := admin.Worker(ctx, "leaving"); !client.IsCode(err, api.CodeNotFound) {
		t.Fatalf("admin read: %v, want not_found", err)
	}
	audit, err := admin.Audit(ctx, client.AuditQuery{Kinds: []string{"worker"}})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, ev := range audit.Events {
		if ev.WorkerID == "leaving" {
			kinds = append(kinds, ev.Kind)
		}
	}
	if !slices.Contains(kinds, "worker.deregistered") {
		t.Fatalf("audit of the worker: %v", kinds)
	}
}

// Bad drains, stops and resumes are refused with the protocol's codes and
// change nothing.
func TestFleetControlRefusals(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	admin := h.Client(t, h.AdminToken)
	_, token := fleetWorker(t, h, "node1")
	if _, err := admin.DrainWorker(t.Context(), "node1", nil); err != nil {
		t.Fatal(err)
	}
	before, err := admin.Worker(t.Context(), "node1")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, path, token, body string
		status                  int
		code                    api.Code
	}{
		{"negative deadline", "/v1/workers/node1/drain", h.AdminToken, `{"deadline_seconds":-1}`, 400, api.CodeInvalidArgument},
		{"deadline past the bound", "/v1/workers/node1/drain", h.AdminToken, `{"deadline_seconds":604801}`, 400, api.CodeInvalidArgument},
		{"deadline not a number", "/v1/workers/node1/drain", h.AdminToken, `{"deadline_seconds":"1h"}`, 400, api.CodeInvalidArgument},
		{"unknown field", "/v1/workers/node1/drain", h.AdminToken, `{"deadline":5}`, 400, api.CodeInvalidArgument},
		{"body on stop", "/v1/workers/node1/stop", h.AdminToken, `{"now":true}`, 400, api.CodeInvalidArgument},
		{"unknown worker", "/v1/workers/nobody/stop", h.AdminToken, `{}`, 404, api.CodeNotFound},
		{"bad worker id", "/v1/workers/no%20such/stop", h.AdminToken, `{}`, 400, api.CodeInvalidArgument},
		{"worker lifting an admin's drain", "/v1/workers/self/resume", token, `{}`, 409, api.CodeConflict},
		{"worker draining another", "/v1/workers/node1/drain", token, `{}`, 403, api.CodeForbidden},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := call(t, h.URL, "POST", c.path, c.token, []byte(c.body), nil)
			wantCode(t, c.name, r, c.status, c.code)
			after, err := admin.Worker(t.Context(), "node1")
			if err != nil || after.Status != before.Status || after.DrainDeadline != before.DrainDeadline || after.DrainedBy != before.DrainedBy {
				t.Fatalf("a refused control changed the worker: %+v -> %+v (%v)", before, after, err)
			}
		})
	}
}
