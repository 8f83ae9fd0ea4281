package coordinator_test

import (
	"slices"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// An admin forgets a revoked worker: it leaves the worker list, an
// admin's read answers 404, and the audit log names who forgot it. A live
// worker is refused with 409 and stays.
func TestForgetWorkerOverHTTP(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	fleetWorker(t, h, "gone")
	fleetWorker(t, h, "alive")
	if _, err := admin.ForgetWorker(ctx, "alive"); !client.IsCode(err, api.CodeConflict) {
		t.Fatalf("forget a ready worker: %v, want conflict", err)
	}
	if _, err := admin.RevokeWorker(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	was, err := admin.ForgetWorker(ctx, "gone")
	if err != nil || was.WorkerID != "gone" || was.Status != api.WorkerRevoked {
		t.Fatalf("forget: %+v %v", was, err)
	}
	if _, err := admin.Worker(ctx, "gone"); !client.IsCode(err, api.CodeNotFound) {
		t.Fatalf("read a forgotten worker: %v, want not_found", err)
	}
	ws, err := admin.Workers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ids := workerIDs(ws); !slices.Equal(ids, []string{"alive"}) {
		t.Fatalf("workers listed: %v", ids)
	}
	audit, err := admin.Audit(ctx, client.AuditQuery{Kinds: []string{"worker.forgotten"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(audit.Events) != 1 || audit.Events[0].WorkerID != "gone" || audit.Events[0].Actor == "" {
		t.Fatalf("audit: %+v", audit.Events)
	}
}

func workerIDs(ws []api.Worker) []string {
	ids := make([]string, len(ws))
	for i, w := range ws {
		ids[i] = w.WorkerID
	}
	return ids
}
