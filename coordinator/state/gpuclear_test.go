package state

import (
	"errors"
	"slices"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/audit"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// An admin's request to clear a GPU stays on the worker until its device
// report shows the GPU back in service or gone; bad requests change
// nothing.
func TestClearGPU(t *testing.T) {
	faulty := gpus("GPU-1", "GPU-2")
	faulty[0].Healthy, faulty[0].Health, faulty[0].HealthReason = false, api.HealthUnhealthy, "XID 48"
	w := register("w1")
	w.Devices = faulty
	s := New()
	mustApply(t, s, w)
	clear := func(worker, uuid string) Result {
		return apply(t, s, command.ClearGPU{WorkerID: worker, UUID: uuid, By: "admin", Now: at(5)})
	}
	for _, c := range []struct {
		worker, uuid string
		want         error
	}{
		{"w1", "GPU-2", ErrConflict}, // healthy
		{"w1", "GPU-9", ErrNotFound},
		{"nobody", "GPU-1", ErrNotFound},
	} {
		if r := clear(c.worker, c.uuid); !errors.Is(r.Err(), c.want) {
			t.Fatalf("clear %s/%s: %v, want %v", c.worker, c.uuid, r.Err(), c.want)
		}
	}
	mustApply(t, s, command.ClearGPU{WorkerID: "w1", UUID: "GPU-1", By: "admin", Now: at(5)}, command.ClearGPU{WorkerID: "w1", UUID: "GPU-1", By: "admin", Now: at(6)})
	pending := func() []string { r, _ := s.Worker("w1"); return r.Worker.ClearGPUs }
	if got := pending(); !slices.Equal(got, []string{"GPU-1"}) {
		t.Fatalf("requests %v", got)
	}
	report := func(health string) command.UpdateWorker {
		d := gpus("GPU-1", "GPU-2")
		d[0].Health = health
		d[0].Healthy = health == api.HealthHealthy
		return command.UpdateWorker{WorkerID: "w1", Executors: []string{"exec"}, Devices: d, Now: at(7), AuditDevices: true}
	}
	mustApply(t, s, report(api.HealthUnhealthy))
	if got := pending(); len(got) != 1 {
		t.Fatalf("settled while the GPU is still unhealthy: %v", got)
	}
	mustApply(t, s, report(api.HealthRecovering))
	if got := pending(); len(got) != 0 {
		t.Fatalf("not settled once the GPU recovers: %v", got)
	}
	var kinds []string
	for _, ev := range s.Audit(audit.Filter{Kinds: []string{"gpu.clear_requested", "gpu.clear_settled"}}) {
		kinds = append(kinds, ev.Kind+" "+ev.Detail)
	}
	if want := []string{"gpu.clear_requested unhealthy: XID 48", "gpu.clear_requested unhealthy: XID 48", "gpu.clear_settled recovering"}; !slices.Equal(kinds, want) {
		t.Fatalf("audit %v, want %v", kinds, want)
	}
}
