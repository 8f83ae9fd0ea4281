package state

import (
	"slices"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/audit"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// A device report that changes a worker's GPUs is audited, GPU by GPU; an
// unchanged one, or an entry written before devices were audited, is not.
func TestDeviceChangesAreAudited(t *testing.T) {
	devs := gpus("GPU-1", "GPU-2")
	sick := gpus("GPU-1", "GPU-3")
	sick[0].Healthy, sick[0].Health, sick[0].HealthReason = false, api.HealthUnhealthy, "xid 79: GPU has fallen off the bus"
	sick[1].Health = api.HealthHealthy
	update := func(d []command.Device, audit bool) command.UpdateWorker {
		return command.UpdateWorker{WorkerID: "w1", Executors: []string{"exec"}, Devices: d, Now: at(5), AuditDevices: audit}
	}
	gpuEvents := func(s *Store) []string {
		var out []string
		for _, ev := range s.Audit(audit.Filter{Kinds: []string{"gpu"}}) {
			out = append(out, ev.Kind+" "+ev.Subject+" "+ev.Detail)
		}
		return out
	}
	cases := []struct {
		name string
		log  []command.Command
		want []string
	}{
		{"unchanged", []command.Command{update(devs, true)}, nil},
		{"an entry from before the audit", []command.Command{update(sick, false)}, nil},
		{"health, added, removed", []command.Command{update(sick, true)}, []string{
			"gpu.health GPU-1 healthy -> unhealthy: xid 79: GPU has fallen off the bus",
			"gpu.added GPU-3 NVIDIA H100 80GB HBM3, 81559 MiB, healthy",
			"gpu.removed GPU-2 NVIDIA H100 80GB HBM3",
		}},
		{"and back", []command.Command{update(sick, true), update(devs, true)}, []string{
			"gpu.health GPU-1 healthy -> unhealthy: xid 79: GPU has fallen off the bus",
			"gpu.added GPU-3 NVIDIA H100 80GB HBM3, 81559 MiB, healthy",
			"gpu.removed GPU-2 NVIDIA H100 80GB HBM3",
			"gpu.health GPU-1 unhealthy -> healthy",
			"gpu.added GPU-2 NVIDIA H100 80GB HBM3, 81559 MiB, healthy",
			"gpu.removed GPU-3 NVIDIA H100 80GB HBM3",
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New()
			mustApply(t, s, register("w1", "GPU-1", "GPU-2"))
			mustApply(t, s, c.log...)
			if got := gpuEvents(s); !slices.Equal(got, c.want) {
				t.Fatalf("audit:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}
