package coordinator_test

import (
	"net/http"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// visionArtifact starts a coordinator with a team vision, a submit token
// of it (alice) and of default (bob), and an artifact alice uploaded.
func visionArtifact(t *testing.T) (h *coordinatortest.Harness, alice, bob string, body []byte, d string) {
	t.Helper()
	h = coordinatortest.Start(t, coordinatortest.Options{})
	if _, err := h.Client(t, h.AdminToken).CreateTeam(t.Context(), api.CreateTeamRequest{Name: "vision"}); err != nil {
		t.Fatal(err)
	}
	alice = mintTeamClient(t, h, "alice", "vision", "submit")
	bob = mintTeamClient(t, h, "bob", api.DefaultTeam, "submit")
	body = []byte("vision's weights")
	d = digest(body)
	if r := call(t, h.URL, "PUT", "/v1/artifacts/"+d, alice, body, nil); r.status != http.StatusCreated {
		t.Fatalf("alice's upload: %d %s", r.status, r.raw)
	}
	return h, alice, bob, body, d
}

// Review of 2026-12-07: a digest must not be a capability. A client of
// another team that PUTs a stored artifact's digest without its bytes
// (Expect: 100-continue and an empty body) is refused and its team still
// cannot read it; with the bytes it may. Before the fix the bodiless PUT
// answered 200 and granted the team.
func TestBodilessPutGrantsNoTeam(t *testing.T) {
	h, alice, bob, body, d := visionArtifact(t)
	expect := map[string]string{"Expect": "100-continue"}
	if r := call(t, h.URL, "PUT", "/v1/artifacts/"+d, bob, nil, expect); r.status != http.StatusBadRequest {
		t.Fatalf("bob's bodiless PUT: %d %s, want 400", r.status, r.raw)
	}
	if r := call(t, h.URL, "PUT", "/v1/artifacts/"+d, bob, []byte("other bytes"), expect); r.status != http.StatusBadRequest {
		t.Fatalf("bob's PUT of other bytes: %d %s, want 400", r.status, r.raw)
	}
	if r := call(t, h.URL, "GET", "/v1/artifacts/"+d, bob, nil, nil); r.status != http.StatusNotFound {
		t.Fatalf("bob reads vision's artifact after PUTs without its bytes: %d", r.status)
	}
	// Alice's team reads it already: her bodiless PUT (a re-upload that
	// skips the bytes) still works.
	if r := call(t, h.URL, "PUT", "/v1/artifacts/"+d, alice, nil, expect); r.status != http.StatusOK {
		t.Fatalf("alice's bodiless PUT: %d %s", r.status, r.raw)
	}
	// With the bytes, bob's team may read what it proved it has.
	if r := call(t, h.URL, "PUT", "/v1/artifacts/"+d, bob, body, expect); r.status != http.StatusOK {
		t.Fatalf("bob's PUT with the bytes: %d %s", r.status, r.raw)
	}
	if r := call(t, h.URL, "GET", "/v1/artifacts/"+d, bob, nil, nil); r.status != http.StatusOK || string(r.raw) != string(body) {
		t.Fatalf("bob reads after proving the bytes: %d", r.status)
	}
}

// A worker's finish or fail that names, as an output or a checkpoint, an
// artifact the job's team may not read and that worker never uploaded is
// refused with 400, and the team still cannot read it; the same report
// naming bytes the worker uploaded is taken. Before the fix the report
// was taken and granted the job's team the other team's artifact.
func TestWorkerReportNamesOnlyWhatItUploaded(t *testing.T) {
	h, _, bob, secret, d := visionArtifact(t)
	ctx := t.Context()
	worker, workerToken := fleetWorker(t, h, "node1")
	if _, err := h.Client(t, bob).SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"x"}`), Outputs: []string{"out"}, Checkpoint: &api.CheckpointSpec{Path: "ckpt"}, MaxAttempts: 3}); err != nil {
		t.Fatal(err)
	}
	acquire := func() *api.Assignment {
		t.Helper()
		acq, err := worker.Acquire(ctx, api.AcquireRequest{WaitSeconds: 5})
		if err != nil || acq.Task == nil {
			t.Fatalf("acquire: %+v %v", acq, err)
		}
		if err := worker.Start(ctx, acq.Task.ID, acq.Task.AttemptID); err != nil {
			t.Fatal(err)
		}
		return acq.Task
	}
	task := acquire()
	stolen := &api.CheckpointRef{SHA256: d, Size: int64(len(secret)), Format: api.CheckpointFile}
	if _, err := worker.Fail(ctx, task.ID, api.FailRequest{AttemptID: task.AttemptID, Reason: "x", Checkpoint: stolen}); !client.IsCode(err, api.CodeInvalidArgument) {
		t.Fatalf("fail naming another team's artifact as a checkpoint: %v, want invalid_argument", err)
	}
	outputs := []api.TaskArtifact{{Path: "out", SHA256: d, Size: int64(len(secret))}}
	if _, err := worker.Finish(ctx, task.ID, api.FinishRequest{AttemptID: task.AttemptID, ExitCode: 0, Artifacts: outputs}); !client.IsCode(err, api.CodeInvalidArgument) {
		t.Fatalf("finish naming another team's artifact as an output: %v, want invalid_argument", err)
	}
	if r := call(t, h.URL, "GET", "/v1/artifacts/"+d, bob, nil, nil); r.status != http.StatusNotFound {
		t.Fatalf("bob reads vision's artifact after the refused reports: %d", r.status)
	}
	// The worker uploads the same bytes (it has them): now it may name them.
	if r := call(t, h.URL, "PUT", "/v1/artifacts/"+d, workerToken, secret, nil); r.status != http.StatusOK {
		t.Fatalf("the worker's upload: %d %s", r.status, r.raw)
	}
	if _, err := worker.Fail(ctx, task.ID, api.FailRequest{AttemptID: task.AttemptID, Reason: "x", Checkpoint: stolen}); err != nil {
		t.Fatalf("fail naming a checkpoint the worker uploaded: %v", err)
	}
	task = acquire()
	if _, err := worker.Finish(ctx, task.ID, api.FinishRequest{AttemptID: task.AttemptID, ExitCode: 0, Artifacts: outputs}); err != nil {
		t.Fatalf("finish naming an output the worker uploaded: %v", err)
	}
	if r := call(t, h.URL, "GET", "/v1/artifacts/"+d, bob, nil, nil); r.status != http.StatusOK {
		t.Fatalf("bob reads his job's output: %d", r.status)
	}
}
