package coordinator_test

import (
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// GET /v1/queue through a real coordinator: with no worker, vision's
// two jobs wait; vision's read token sees vision's queue in order
// (priority first) and not another team's (404, as if it did not
// exist); the admin sees every team, or the one it names; bad queries
// are 400.
func TestQueueOverHTTP(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	for _, name := range []string{"vision", "speech"} {
		if _, err := admin.CreateTeam(ctx, api.CreateTeamRequest{Name: name, Quota: api.QuotaGPUs(1)}); err != nil {
			t.Fatal(err)
		}
	}
	vision := h.Client(t, mintTeamClient(t, h, "alice", "vision", "submit"))
	speech := h.Client(t, mintTeamClient(t, h, "sam", "speech", "submit"))
	low, err := vision.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`), Resources: &api.Resources{GPUs: 1}})
	if err != nil {
		t.Fatal(err)
	}
	high, err := vision.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`), Resources: &api.Resources{GPUs: 2}, Priority: 7})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := speech.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`)}); err != nil {
		t.Fatal(err)
	}
	readTok := mintTeamClient(t, h, "reader", "vision", "read")
	q, err := h.Client(t, readTok).Queue(ctx, "", 0)
	if err != nil || len(q.Teams) != 1 || q.Teams[0].Team != "vision" || q.Teams[0].Queued != 2 || len(q.Teams[0].Tasks) != 2 {
		t.Fatalf("vision's read token: %+v %v", q, err)
	}
	first := q.Teams[0].Tasks[0]
	if first.JobID != high.ID || first.Position != 1 || first.GPUs != 2 || q.Teams[0].Tasks[1].JobID != low.ID || first.Reason == "" {
		t.Fatalf("vision's order: %+v, want %s (priority 7) first with a reason, then %s", q.Teams[0].Tasks, high.ID, low.ID)
	}
	wantCode(t, "another team", call(t, h.URL, "GET", "/v1/queue?team=speech", readTok, nil, nil), 404, api.CodeNotFound)
	all, err := admin.Queue(ctx, "", 1)
	if err != nil || len(all.Teams) != 2 || len(all.Teams[0].Tasks) != 1 {
		t.Fatalf("admin: %+v %v", all, err)
	}
	if one, err := admin.Queue(ctx, "speech", 0); err != nil || len(one.Teams) != 1 || one.Teams[0].Team != "speech" {
		t.Fatalf("admin naming speech: %+v %v", one, err)
	}
	for _, bad := range []string{"?limit=0", "?limit=1001", "?limit=x", "?team=Bad%20Name", "?colour=red"} {
		wantCode(t, "queue"+bad, call(t, h.URL, "GET", "/v1/queue"+bad, readTok, nil, nil), 400, api.CodeInvalidArgument)
	}
}
