package coordinator_test

import (
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// One acquire can fill several slots: it answers up to max_tasks distinct
// tasks, the first also in task; a retry under its request id gets the
// same tasks again; a call that asks for one keeps the old answer's shape.
func TestAcquireSeveralTasks(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	worker, token := fleetWorker(t, h, "many")
	for range 5 {
		if _, err := admin.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	req := api.AcquireRequest{MaxTasks: 3, RequestID: "fill-three"}
	got, err := worker.Acquire(ctx, req)
	if err != nil || len(got.Tasks) != 3 || got.Task == nil || got.Task.ID != got.Tasks[0].ID {
		t.Fatalf("acquire for three: %+v %v", got, err)
	}
	seen := map[string]bool{}
	for _, a := range got.Tasks {
		seen[a.ID] = true
	}
	if len(seen) != 3 {
		t.Fatalf("the same task twice: %+v", got.Tasks)
	}
	again, err := worker.Acquire(ctx, req)
	if err != nil || len(again.Tasks) != 3 {
		t.Fatalf("retry: %+v %v", again, err)
	}
	for i := range again.Tasks {
		if again.Tasks[i].AttemptID != got.Tasks[i].AttemptID {
			t.Fatalf("the retry got %s, the call %s", again.Tasks[i].AttemptID, got.Tasks[i].AttemptID)
		}
	}
	one, err := worker.Acquire(ctx, api.AcquireRequest{})
	if err != nil || one.Task == nil || one.Tasks != nil || seen[one.Task.ID] {
		t.Fatalf("acquire for one: %+v %v", one, err)
	}
	rest, err := worker.Acquire(ctx, api.AcquireRequest{MaxTasks: 64})
	if err != nil || len(rest.Tasks) != 1 {
		t.Fatalf("acquire for up to 64 with one left: %+v %v", rest, err)
	}
	for _, bad := range []string{`{"max_tasks":-1}`, `{"max_tasks":65}`, `{"max_tasks":"3"}`} {
		r := call(t, h.URL, "POST", "/v1/workers/self/acquire", token, []byte(bad), nil)
		wantCode(t, bad, r, 400, api.CodeInvalidArgument)
	}
}
