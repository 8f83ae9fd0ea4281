package coordinator_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

func TestGroupRoutes(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	enroll(t, h, "w1")
	enroll(t, h, "w2")

	r := call(t, h.URL, "POST", "/v1/groups", h.AdminToken, []byte(`{"group_id":"inner","members":[{"kind":"worker","id":"w1"},{"kind":"worker","id":"w1"}]}`), nil)
	var created api.GroupResponse
	if err := json.Unmarshal(r.raw, &created); r.status != 201 || err != nil || created.Group.GroupID != "inner" || len(created.Group.Members) != 1 || created.Group.CreatedBy != "admin" {
		t.Fatalf("create: %d %s", r.status, r.raw)
	}
	mustGroup(t, admin, "outer", groupRef("inner"), workerRef("w2"))

	g, err := admin.AddGroupMember(ctx, "inner", workerRef("w1"))
	if err != nil || len(g.Members) != 1 {
		t.Fatalf("adding a present member: %+v %v", g, err)
	}
	if g, err = admin.RemoveGroupMember(ctx, "inner", workerRef("w2")); err != nil || len(g.Members) != 1 {
		t.Fatalf("removing an absent member: %+v %v", g, err)
	}
	outer, err := admin.Group(ctx, "outer")
	if err != nil || !slices.Equal(outer.Workers, []string{"w1", "w2"}) {
		t.Fatalf("outer resolves to %v %v", outer.Workers, err)
	}
	w1, err := admin.Worker(ctx, "w1")
	if err != nil || !slices.Equal(w1.Groups, []string{"inner", "outer"}) {
		t.Fatalf("w1's groups: %v %v", w1.Groups, err)
	}
	list, err := admin.Groups(ctx)
	if err != nil || len(list) != 2 || list[0].GroupID != "inner" || list[1].GroupID != "outer" {
		t.Fatalf("list: %+v %v", list, err)
	}

	if _, err := admin.DeleteGroup(ctx, "inner"); !client.IsCode(err, api.CodeConflict) {
		t.Fatalf("deleting a group another contains: %v, want conflict", err)
	}
	spec := execJob()
	spec.Target = &api.Target{Kind: api.TargetGroup, ID: "outer"}
	job, err := admin.SubmitJob(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if job.Target == nil || *job.Target != *spec.Target {
		t.Fatalf("job does not echo its target: %+v", job.Target)
	}
	if _, err := admin.DeleteGroup(ctx, "outer"); !client.IsCode(err, api.CodeConflict) {
		t.Fatalf("deleting a group a pending job targets: %v, want conflict", err)
	}
	if _, err := admin.CancelJob(ctx, job.ID); err != nil {
		t.Fatal(err)
	}
	if g, err := admin.DeleteGroup(ctx, "outer"); err != nil || g.GroupID != "outer" {
		t.Fatalf("delete: %+v %v", g, err)
	}
	if _, err := admin.Group(ctx, "outer"); !client.IsCode(err, api.CodeNotFound) {
		t.Fatalf("deleted group still read: %v", err)
	}
	if w1, _ := admin.Worker(ctx, "w1"); !slices.Equal(w1.Groups, []string{"inner"}) {
		t.Fatalf("w1's groups after delete: %v", w1.Groups)
	}
}

func TestTargetsAndCapabilities(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	_, w1 := enroll(t, h, "w1")
	_, w2 := enroll(t, h, "w2")
	_, trainer := enroll(t, h, "trainer", "train")
	mustGroup(t, admin, "inner", workerRef("w2"))
	mustGroup(t, admin, "outer", groupRef("inner"))

	submit := func(target *api.Target, capability string) string {
		spec := execJob()
		spec.Target, spec.Capability = target, capability
		j, err := admin.SubmitJob(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		return j.ID
	}
	none := func(who string, w *client.Client, req api.AcquireRequest) {
		t.Helper()
		if a, err := w.Acquire(ctx, req); err != nil || a.Task != nil {
			t.Fatalf("%s acquired %+v %v", who, a.Task, err)
		}
	}
	take := func(who string, w *client.Client, req api.AcquireRequest, job string) {
		t.Helper()
		a, err := w.Acquire(ctx, req)
		if err != nil || a.Task == nil || a.Task.JobID != job {
			t.Fatalf("%s acquired %+v %v, want a task of %s", who, a.Task, err, job)
		}
		if _, err := w.Finish(ctx, a.Task.ID, api.FinishRequest{AttemptID: a.Task.AttemptID}); err != nil {
			t.Fatal(err)
		}
	}

	toW2 := submit(&api.Target{Kind: api.TargetWorker, ID: "w2"}, "")
	none("w1", w1, api.AcquireRequest{})
	take("w2", w2, api.AcquireRequest{}, toW2)

	toOuter := submit(&api.Target{Kind: api.TargetGroup, ID: "outer"}, "")
	none("w1", w1, api.AcquireRequest{})
	take("w2 through inner", w2, api.AcquireRequest{}, toOuter)

	infer := submit(nil, "infer")
	none("trainer", trainer, api.AcquireRequest{})
	none("w1 narrowed to train", w1, api.AcquireRequest{Capability: "train"})
	take("w1", w1, api.AcquireRequest{Capability: "infer"}, infer)

	train := submit(nil, "train")
	plain := submit(nil, "")
	none("trainer narrowed to infer", trainer, api.AcquireRequest{Capability: "infer"})
	take("trainer", trainer, api.AcquireRequest{Capability: "train"}, train)
	none("trainer narrowed to train", trainer, api.AcquireRequest{Capability: "train"})
	take("trainer", trainer, api.AcquireRequest{}, plain)

	for _, target := range []api.Target{{Kind: api.TargetGroup, ID: "ghost"}, {Kind: api.TargetWorker, ID: "ghost"}} {
		spec := execJob()
		spec.Target = &target
		before := snapshot(t, h)
		if _, err := admin.SubmitJob(ctx, spec); !client.IsCode(err, api.CodeNotFound) {
			t.Fatalf("target %+v: %v, want not_found", target, err)
		}
		if !bytes.Equal(before, snapshot(t, h)) {
			t.Fatal("a refused submit changed the state")
		}
	}
}

func TestRevokeOverHTTP(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	tok, doomed := enroll(t, h, "doomed")
	_, rescuer := enroll(t, h, "rescuer")
	job, err := admin.SubmitJob(ctx, execJob())
	if err != nil {
		t.Fatal(err)
	}
	held := acquireOne(t, doomed)
	if err := doomed.Start(ctx, held.ID, held.AttemptID); err != nil {
		t.Fatal(err)
	}

	w, err := admin.RevokeWorker(ctx, "doomed")
	if err != nil || w.Status != api.WorkerRevoked || len(w.RunningTasks) != 0 {
		t.Fatalf("revoke: %+v %v", w, err)
	}
	j, _ := admin.Job(ctx, job.ID)
	if task := j.Tasks[0]; task.State != api.TaskPending || task.Attempts[0].State != api.AttemptLost || task.Attempts[0].WorkerID != "doomed" {
		t.Fatalf("task after revoke: %+v", task)
	}
	finish := []byte(`{"attempt_id":"` + held.AttemptID + `","exit_code":0}`)
	for _, c := range []struct{ method, path string }{
		{"POST", "/v1/workers/self/heartbeat"},
		{"POST", "/v1/workers/self/acquire"},
		{"GET", "/v1/workers/self"},
		{"POST", "/v1/tasks/" + held.ID + "/finish"},
	} {
		if r := call(t, h.URL, c.method, c.path, tok, finish, nil); r.status != 403 || r.body.Error.Code != api.CodeWorkerRevoked {
			t.Fatalf("%s %s by a revoked worker: %d %s", c.method, c.path, r.status, r.raw)
		}
	}
	if _, err := admin.ReissueWorker(ctx, "doomed"); !client.IsCode(err, api.CodeConflict) {
		t.Fatalf("reissuing a revoked worker: %v, want conflict", err)
	}
	again := acquireOne(t, rescuer)
	if again.ID != held.ID || again.Attempt != 2 {
		t.Fatalf("rescuer got %+v", again)
	}
	if _, err := admin.RevokeWorker(ctx, "doomed"); err != nil {
		t.Fatalf("revoking twice: %v", err)
	}
	if _, err := admin.RevokeWorker(ctx, "ghost"); !client.IsCode(err, api.CodeNotFound) {
		t.Fatalf("revoking an unknown worker: %v", err)
	}
	// Reads of the registry never show a hash or a credential id.
	for _, path := range []string{"/v1/workers", "/v1/workers/doomed"} {
		r := call(t, h.URL, "GET", path, h.AdminToken, nil, nil)
		if r.status != 200 || bytes.Contains(r.raw, []byte("hash")) || bytes.Contains(r.raw, []byte("credential")) {
			t.Fatalf("GET %s: %d %s", path, r.status, r.raw)
		}
	}
}
