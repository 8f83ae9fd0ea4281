package coordinator_test

import (
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// An admin's read of a worker says when the leader last heard from it:
// nothing before its first heartbeat, the time of the last one after.
func TestWorkerReadsShowTheLastHeartbeat(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	reg, err := h.Client(t, h.JoinToken).Register(ctx, api.RegisterRequest{WorkerID: "beat", Capabilities: []string{"*"}, Executors: []string{"exec"}})
	if err != nil {
		t.Fatal(err)
	}
	if w, err := admin.Worker(ctx, "beat"); err != nil || w.LastHeartbeat != "" {
		t.Fatalf("before any heartbeat: %q %v", w.LastHeartbeat, err)
	}
	before := time.Now().UTC()
	if _, err := h.Client(t, reg.WorkerToken).Heartbeat(ctx, api.HeartbeatRequest{}); err != nil {
		t.Fatal(err)
	}
	w, err := admin.Worker(ctx, "beat")
	if err != nil {
		t.Fatal(err)
	}
	seen, err := time.Parse(time.RFC3339Nano, w.LastHeartbeat)
	if err != nil || seen.Before(before.Add(-time.Second)) {
		t.Fatalf("last_heartbeat %q (%v), want a time after %v", w.LastHeartbeat, err, before)
	}
	ws, err := admin.Workers(ctx)
	if err != nil || len(ws) != 1 || ws[0].LastHeartbeat != w.LastHeartbeat {
		t.Fatalf("the list says %+v %v", ws, err)
	}
}
