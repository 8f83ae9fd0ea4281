package coordinator_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// A team's artifact quota (quota.artifact_bytes) bounds the bytes its
// client tokens upload and its jobs' tasks upload as outputs and
// checkpoints together: past it an upload is 413 and nothing is
// recorded; the team's usage shows the bytes; a checkpoint that replaces
// an older one frees the older one's bytes.
func TestArtifactByteQuotaPerTeam(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	quota := int64(1000)
	if _, err := admin.CreateTeam(ctx, api.CreateTeamRequest{Name: "vision", Quota: &api.TeamQuotaRequest{ArtifactBytes: &quota}}); err != nil {
		t.Fatal(err)
	}
	aliceTok := mintTeamClient(t, h, "alice", "vision", "submit", "read")
	alice := h.Client(t, aliceTok)
	used := func(want int64) {
		t.Helper()
		team, err := admin.Team(ctx, "vision")
		if err != nil || team.Usage.ArtifactBytes != want || team.Quota.ArtifactBytes == nil || *team.Quota.ArtifactBytes != quota {
			t.Fatalf("team vision: %+v %v, want %d bytes used of %d", team, err, want, quota)
		}
	}
	refused := func(what string, tok string, body []byte) {
		t.Helper()
		before := snapshot(t, h)
		wantCode(t, what, call(t, h.URL, "PUT", "/v1/artifacts/"+digest(body), tok, body, nil), 413, api.CodeBodyTooLarge)
		wantCode(t, what+", no length given", callChunked(t, h.URL, "/v1/artifacts/"+digest(body), tok, body), 413, api.CodeBodyTooLarge)
		if _, ok := h.Server.Store().Artifact(digest(body)); ok {
			t.Fatalf("%s: recorded", what)
		}
		if after := snapshot(t, h); !bytes.Equal(before, after) {
			t.Fatalf("%s: the state changed", what)
		}
	}

	// A client's uploads.
	if _, err := alice.PutArtifact(ctx, digest(fill('a', 500)), fill('a', 500)); err != nil {
		t.Fatal(err)
	}
	used(500)
	refused("alice past her team's quota", aliceTok, fill('b', 600))
	// Another team's token has its own room.
	if _, err := h.Client(t, mintClient(t, h, "carol", "submit")).PutArtifact(ctx, digest(fill('b', 600)), fill('b', 600)); err != nil {
		t.Fatalf("a default team upload: %v", err)
	}
	used(500)

	// A task's outputs.
	wtok, w := enroll(t, h, "maker")
	spec := execJob()
	spec.Target = &api.Target{Kind: api.TargetWorker, ID: "maker"}
	spec.Outputs = []string{"out/*"}
	if _, err := alice.SubmitJob(ctx, spec); err != nil {
		t.Fatal(err)
	}
	task := acquireOne(t, w)
	refused("an output past the team's quota", wtok, fill('c', 600))
	out := fill('d', 300)
	if _, err := w.PutArtifact(ctx, digest(out), out); err != nil {
		t.Fatal(err)
	}
	used(800)
	if _, err := w.Finish(ctx, task.ID, api.FinishRequest{AttemptID: task.AttemptID, Artifacts: []api.TaskArtifact{{Path: "out/d", SHA256: digest(out), Size: int64(len(out))}}}); err != nil {
		t.Fatal(err)
	}
	used(800)

	// A task's checkpoints: only its latest counts. A retry avoids the
	// worker it failed on, so another takes it.
	_, w2 := enroll(t, h, "maker-2")
	spec = execJob()
	spec.Checkpoint = &api.CheckpointSpec{Path: "ckpt"}
	spec.MaxAttempts = 3
	if _, err := alice.SubmitJob(ctx, spec); err != nil {
		t.Fatal(err)
	}
	task = acquireOne(t, w)
	refused("a checkpoint past the team's quota", wtok, fill('e', 250))
	first := fill('f', 100)
	checkpoint(t, w, task, first)
	used(900)
	again, err := w2.Acquire(ctx, api.AcquireRequest{WaitSeconds: 5})
	if err != nil || again.Task == nil {
		t.Fatalf("the task's next attempt: %+v %v", again, err)
	}
	task = again.Task
	// The newer is uploaded while the older still counts (900 + 90 fits),
	// then replaces it: 900 - 100 + 90.
	second := fill('g', 90)
	checkpoint(t, w2, task, second)
	used(890)

	// Lifting the quota lets the refused upload in.
	if _, err := admin.UpdateTeam(ctx, "vision", api.UpdateTeamRequest{ClearArtifactQuota: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.PutArtifact(ctx, digest(fill('b', 600)), fill('b', 600)); err != nil {
		t.Fatalf("with the quota lifted: %v", err)
	}
}

// checkpoint uploads body and fails the attempt (to be retried) with it
// as the task's checkpoint.
func checkpoint(t *testing.T, w *client.Client, task *api.Assignment, body []byte) {
	t.Helper()
	if _, err := w.PutArtifact(t.Context(), digest(body), body); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Fail(t.Context(), task.ID, api.FailRequest{AttemptID: task.AttemptID, Reason: "exit 1",
		Checkpoint: &api.CheckpointRef{SHA256: digest(body), Size: int64(len(body)), Format: api.CheckpointFile}}); err != nil {
		t.Fatal(err)
	}
}

func fill(b byte, n int) []byte { return bytes.Repeat([]byte{b}, n) }

// PATCH sets the artifact quota alone (the GPU quota stays) and lifts it
// with quota.artifact_bytes null; the GPU quota alone keeps it.
func TestTeamArtifactQuotaPatch(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	if _, err := admin.CreateTeam(ctx, api.CreateTeamRequest{Name: "vision", Quota: api.QuotaGPUs(2)}); err != nil {
		t.Fatal(err)
	}
	team := func(what, body string) api.Team {
		t.Helper()
		r := call(t, h.URL, "PATCH", "/v1/teams/vision", h.AdminToken, []byte(body), nil)
		var out api.TeamResponse
		if err := json.Unmarshal(r.raw, &out); r.status != 200 || err != nil {
			t.Fatalf("%s: HTTP %d %s (%v)", what, r.status, r.raw, err)
		}
		return out.Team
	}
	if got := team("set", `{"quota":{"artifact_bytes":4096}}`); got.Quota.GPUs != 2 || got.Quota.ArtifactBytes == nil || *got.Quota.ArtifactBytes != 4096 {
		t.Fatalf("after setting the artifact quota: %+v", got.Quota)
	}
	if got := team("gpus alone", `{"quota":{"gpus":3}}`); got.Quota.GPUs != 3 || got.Quota.ArtifactBytes == nil || *got.Quota.ArtifactBytes != 4096 {
		t.Fatalf("after changing the GPUs alone: %+v", got.Quota)
	}
	if got := team("lift", `{"quota":{"artifact_bytes":null}}`); got.Quota.GPUs != 3 || got.Quota.ArtifactBytes != nil {
		t.Fatalf("after lifting the artifact quota: %+v", got.Quota)
	}
}
