package coordinator_test

import (
	"slices"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/coordinator/migauto"
	"github.com/gpulayer/gpulayer/internal/clock"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// The MIG auto mode on a real coordinator, driven by its clock: a task
// waits for 3g.40gb devices no GPU offers; once the demand has lasted the
// window, the leader asks for one idle A100's layout (two 3g.40gb,
// audited as the auto mode's), and, the demand lasting, a second GPU only
// a window later, never two at once.
func TestMIGAutoModeRepartitionsAnIdleGPU(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC))
	h := coordinatortest.Start(t, coordinatortest.Options{Tweak: func(c *coordinator.Config) {
		c.Clock = clk
		c.MIGAuto = migauto.Settings{Cluster: true, Window: time.Minute, MinInterval: time.Hour}
	}})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	reg, err := h.Client(t, h.JoinToken).Register(ctx, api.RegisterRequest{WorkerID: "w1", Capabilities: []string{"*"}, Executors: []string{"exec"},
		Devices: []api.Device{a100(0, "GPU-a"), a100(1, "GPU-b")}})
	if err != nil {
		t.Fatal(err)
	}
	worker := h.Client(t, reg.WorkerToken)
	if _, err := admin.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`), Count: 3, Resources: &api.Resources{GPUs: 1, MIGProfile: "3g.40gb"}}); err != nil {
		t.Fatal(err)
	}
	// tick moves the coordinator's clock on by d, a poll at a time, the
	// worker heartbeating, and answers the worker's MIG layouts.
	tick := func(d time.Duration) []api.MIGLayout {
		t.Helper()
		for step := time.Duration(0); step < d; step += 5 * time.Second {
			if _, err := worker.Heartbeat(ctx, api.HeartbeatRequest{}); err != nil {
				t.Fatal(err)
			}
			clk.Advance(5 * time.Second)
		}
		w, err := admin.Worker(ctx, "w1")
		if err != nil {
			t.Fatal(err)
		}
		return w.MIGLayouts
	}
	if got := tick(40 * time.Second); len(got) != 0 {
		t.Fatalf("repartitioned before the window: %+v", got)
	}
	var first []api.MIGLayout
	coordinatortest.WaitFor(t, 30*time.Second, "the auto mode to ask for a layout", func() bool {
		first = tick(5 * time.Second)
		return len(first) > 0
	})
	l := first[0]
	if len(first) != 1 || l.UUID != "GPU-a" || !l.Auto || l.RequestedBy != migauto.By || l.State != api.MIGLayoutPending || !slices.Equal(l.Layout, []string{"3g.40gb", "3g.40gb"}) {
		t.Fatalf("the auto mode's request: %+v", first)
	}
	if got := tick(30 * time.Second); len(got) != 1 {
		t.Fatalf("a second GPU within a window of the first: %+v", got)
	}
	coordinatortest.WaitFor(t, 30*time.Second, "a second GPU a window later", func() bool {
		return len(tick(5*time.Second)) == 2
	})
	audit, err := admin.Audit(ctx, client.AuditQuery{Kinds: []string{"gpu.mig_auto_requested"}})
	if err != nil || len(audit.Events) != 2 || audit.Events[0].Actor != migauto.By {
		t.Fatalf("audit %+v %v", audit, err)
	}
}
