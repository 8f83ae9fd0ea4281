package coordinator_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/coordinator/preempt"
	"github.com/gpulayer/gpulayer/coordinator/sched/preemption"
	"github.com/gpulayer/gpulayer/internal/clock"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// Preemption through a real coordinator and its leader loop: team ml
// borrows the only GPU; team research, owed one, submits; once ml's
// attempt ran its minimum runtime, the heartbeat tells the worker to
// stop it as preempted, with its job's grace; the end reports a
// checkpoint; the attempt is preempted, named for research's job, and
// uses no attempt; the freed GPU goes to research's task, though ml's
// is older; ml's next attempt is handed its checkpoint to stage.
func TestPreemptionOverHTTP(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC))
	h := coordinatortest.Start(t, coordinatortest.Options{Tweak: func(c *coordinator.Config) {
		c.Clock = clk
		c.Preemption = preempt.Config{Options: preemption.Options{MinRuntime: time.Minute}, Interval: time.Second}
	}})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	if _, err := admin.CreateTeam(ctx, api.CreateTeamRequest{Name: "ml"}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CreateTeam(ctx, api.CreateTeamRequest{Name: "research", Quota: api.QuotaGPUs(1)}); err != nil {
		t.Fatal(err)
	}
	ml := h.Client(t, mintTeamClient(t, h, "ml-user", "ml", "submit", "read"))
	research := h.Client(t, mintTeamClient(t, h, "research-user", "research", "submit", "read"))
	reg, err := h.Client(t, h.JoinToken).Register(ctx, api.RegisterRequest{WorkerID: "gpu-1", Capabilities: []string{"*"}, Executors: []string{"exec"},
		Devices: []api.Device{{Index: 0, UUID: "GPU-0", Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559, Healthy: true, Health: api.HealthHealthy}}})
	if err != nil {
		t.Fatal(err)
	}
	worker := h.Client(t, reg.WorkerToken)
	grace := 7
	mlJob, err := ml.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"train"}`), Resources: &api.Resources{GPUs: 1},
		PreemptionGraceSeconds: &grace, Checkpoint: &api.CheckpointSpec{Path: "ckpt"}})
	if err != nil {
		t.Fatal(err)
	}
	first, err := worker.Acquire(ctx, api.AcquireRequest{})
	if err != nil || first.Task == nil || first.Task.JobID != mlJob.ID || first.Task.PreemptionGraceSeconds != grace ||
		first.Task.Checkpoint == nil || first.Task.Checkpoint.Path != "ckpt" || first.Task.Checkpoint.Latest != nil {
		t.Fatalf("first acquire: %+v %v", first.Task, err)
	}
	if err := worker.Start(ctx, first.Task.ID, first.Task.AttemptID); err != nil {
		t.Fatal(err)
	}
	rJob, err := research.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"eval"}`), Resources: &api.Resources{GPUs: 1}})
	if err != nil {
		t.Fatal(err)
	}
	coordinatortest.WaitFor(t, 30*time.Second, "the heartbeat to name ml's task preempted", func() bool {
		clk.Advance(5 * time.Second)
		hb, err := worker.Heartbeat(ctx, api.HeartbeatRequest{RunningTaskIDs: []string{first.Task.ID}})
		return err == nil && slices.Contains(hb.CancelTaskIDs, first.Task.ID) && slices.Contains(hb.PreemptTaskIDs, first.Task.ID)
	})

	ckpt := []byte("step 41\n")
	sum := sha256.Sum256(ckpt)
	digest := hex.EncodeToString(sum[:])
	if _, err := worker.PutArtifact(ctx, digest, ckpt); err != nil {
		t.Fatal(err)
	}
	if _, err := worker.Finish(ctx, first.Task.ID, api.FinishRequest{AttemptID: first.Task.AttemptID, ExitCode: 143,
		Checkpoint: &api.CheckpointRef{SHA256: digest, Size: int64(len(ckpt)), Format: api.CheckpointFile}}); err != nil {
		t.Fatal(err)
	}
	job, err := ml.Job(ctx, mlJob.ID)
	if err != nil {
		t.Fatal(err)
	}
	tk := job.Tasks[0]
	if tk.State != api.TaskPending || tk.Attempts[0].State != api.AttemptPreempted ||
		!strings.Contains(tk.Attempts[0].Reason, "preempted by job "+rJob.ID+" (team research)") ||
		tk.Checkpoint == nil || tk.Checkpoint.SHA256 != digest || tk.Checkpoint.AttemptID != first.Task.AttemptID {
		t.Fatalf("ml's task after the preemption: %+v", tk)
	}

	second, err := worker.Acquire(ctx, api.AcquireRequest{})
	if err != nil || second.Task == nil || second.Task.JobID != rJob.ID {
		t.Fatalf("the freed GPU went to %+v (%v), not to research's task", second.Task, err)
	}
	if err := worker.Start(ctx, second.Task.ID, second.Task.AttemptID); err != nil {
		t.Fatal(err)
	}
	if _, err := worker.Finish(ctx, second.Task.ID, api.FinishRequest{AttemptID: second.Task.AttemptID}); err != nil {
		t.Fatal(err)
	}
	third, err := worker.Acquire(ctx, api.AcquireRequest{WaitSeconds: 5})
	if err != nil || third.Task == nil || third.Task.ID != first.Task.ID || third.Task.Checkpoint == nil ||
		third.Task.Checkpoint.Latest == nil || third.Task.Checkpoint.Latest.SHA256 != digest {
		t.Fatalf("ml's next attempt: %+v %v", third.Task, err)
	}
	var staged bytes.Buffer
	if _, err := worker.GetArtifact(ctx, digest, &staged); err != nil || staged.String() != string(ckpt) {
		t.Fatalf("the worker could not fetch the checkpoint it stages: %q %v", staged.String(), err)
	}
	checkPreemptionEvents(t, ml, research, mlJob.ID, rJob.ID, first.Task, digest)
	list, err := admin.Audit(ctx, client.AuditQuery{Kinds: []string{"task.preempted"}})
	if err != nil || len(list.Events) != 1 || list.Events[0].Subject != first.Task.ID || !strings.Contains(list.Events[0].Detail, rJob.ID) {
		t.Fatalf("audit: %+v %v", list.Events, err)
	}
}

// A bad checkpoint on an attempt's end is 400 and ends nothing: not a
// digest, a size out of bounds, an unknown format, one not uploaded,
// or one for a job that has no checkpoint path.
func TestCheckpointReportRefusesBadInput(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	worker, _ := fleetWorker(t, h, "node1")
	withCkpt, err := admin.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"x"}`), Checkpoint: &api.CheckpointSpec{Path: "ckpt"}})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := admin.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"y"}`), Outputs: []string{"out"}})
	if err != nil {
		t.Fatal(err)
	}
	held := map[string]*api.Assignment{}
	for range 2 {
		acq, err := worker.Acquire(ctx, api.AcquireRequest{WaitSeconds: 5})
		if err != nil || acq.Task == nil {
			t.Fatalf("acquire: %+v %v", acq, err)
		}
		if err := worker.Start(ctx, acq.Task.ID, acq.Task.AttemptID); err != nil {
			t.Fatal(err)
		}
		held[acq.Task.JobID] = acq.Task
	}
	body := []byte("state")
	sum := sha256.Sum256(body)
	uploaded := hex.EncodeToString(sum[:])
	if _, err := worker.PutArtifact(ctx, uploaded, body); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		job  string
		ref  api.CheckpointRef
	}{
		{"not a digest", withCkpt.ID, api.CheckpointRef{SHA256: "abc", Size: 5, Format: api.CheckpointFile}},
		{"a negative size", withCkpt.ID, api.CheckpointRef{SHA256: uploaded, Size: -1, Format: api.CheckpointFile}},
		{"an unknown format", withCkpt.ID, api.CheckpointRef{SHA256: uploaded, Size: 5, Format: "zip"}},
		{"not uploaded", withCkpt.ID, api.CheckpointRef{SHA256: strings.Repeat("ab", 32), Size: 5, Format: api.CheckpointFile}},
		{"the wrong size", withCkpt.ID, api.CheckpointRef{SHA256: uploaded, Size: 6, Format: api.CheckpointFile}},
		{"a job with no checkpoint path", plain.ID, api.CheckpointRef{SHA256: uploaded, Size: 5, Format: api.CheckpointFile}},
	}
	for _, c := range cases {
		a := held[c.job]
		ref := c.ref
		if _, err := worker.Finish(ctx, a.ID, api.FinishRequest{AttemptID: a.AttemptID, ExitCode: 1, Checkpoint: &ref}); !client.IsCode(err, api.CodeInvalidArgument) {
			t.Errorf("%s: finish answered %v", c.name, err)
		}
		if _, err := worker.Fail(ctx, a.ID, api.FailRequest{AttemptID: a.AttemptID, Reason: "x", Checkpoint: &ref}); !client.IsCode(err, api.CodeInvalidArgument) {
			t.Errorf("%s: fail answered %v", c.name, err)
		}
	}
	for _, a := range held {
		job, err := admin.Job(ctx, a.JobID)
		if err != nil || job.Tasks[0].State != api.TaskRunning || job.Tasks[0].Checkpoint != nil {
			t.Fatalf("job %s after the refusals: %+v %v", a.JobID, job.Tasks, err)
		}
	}
}

// checkPreemptionEvents reads ml's job's events after its first attempt
// was preempted for research's job and saved a checkpoint: they say so,
// in time order, and research's client cannot read them (404).
func checkPreemptionEvents(t *testing.T, ml, research *client.Client, mlJob, rJob string, first *api.Assignment, digest string) {
	t.Helper()
	ctx := t.Context()
	evs, err := ml.JobEvents(ctx, mlJob)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	var preempted, ended *api.JobEvent
	for i, e := range evs.Events {
		kinds = append(kinds, e.Kind)
		if i > 0 && e.Time < evs.Events[i-1].Time {
			t.Fatalf("events out of time order: %+v", evs.Events)
		}
		switch {
		case e.Kind == api.EventAttemptPreempted:
			preempted = &evs.Events[i]
		case e.Kind == api.EventAttemptEnded && e.Attempt != nil && e.Attempt.AttemptID == first.AttemptID:
			ended = &evs.Events[i]
		}
	}
	want := []string{api.EventJobSubmitted, api.EventAttemptAssigned, api.EventAttemptStarted, api.EventAttemptPreempted, api.EventAttemptEnded, api.EventCheckpointSaved}
	if !slices.Equal(kinds[:min(len(kinds), len(want))], want) {
		t.Fatalf("event kinds %v, want %v first", kinds, want)
	}
	if preempted.PreemptedBy == nil || preempted.PreemptedBy.JobID != rJob || preempted.PreemptedBy.Team != "research" || preempted.TaskID != first.ID {
		t.Fatalf("preemption event %+v", preempted)
	}
	if ended == nil || ended.Attempt.Outcome != api.AttemptPreempted || ended.PreemptedBy == nil || !strings.Contains(ended.Attempt.Reason, rJob) {
		t.Fatalf("the preempted attempt's end %+v", ended)
	}
	if cp := evs.Events[5].Checkpoint; cp == nil || cp.SHA256 != digest || cp.AttemptID != first.AttemptID {
		t.Fatalf("checkpoint event %+v", evs.Events[5])
	}
	if _, err := research.JobEvents(ctx, mlJob); !client.IsCode(err, api.CodeNotFound) {
		t.Fatalf("another team read the job's events: %v", err)
	}
}
