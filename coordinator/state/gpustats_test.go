package state

import (
	"maps"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/sdk/api"
)

const h100 = "NVIDIA H100 80GB HBM3"

// Stats counts GPUs by model: held whole or by a share, free on a ready
// worker, unhealthy, and, of the held or free, the degraded; a GPU in MIG mode as its MIG devices, a draining
// worker's unheld GPUs in no count, a revoked worker's not at all. The
// counts follow the state: a finished task frees its GPUs.
func TestStatsCountGPUsByModel(t *testing.T) {
	s := New()
	sick := register("w2", "GPU-20", "GPU-21")
	for i := range sick.Devices {
		sick.Devices[i].Name = "NVIDIA A100-SXM4-40GB"
	}
	sick.Devices[1].Healthy, sick.Devices[1].Health = false, api.HealthUnhealthy
	mustApply(t, s,
		degrade(register("w1", "GPU-10", "GPU-11", "GPU-12", "GPU-13"), "GPU-13"), // free, degraded
		sick,
		register("w3", "GPU-30", "GPU-31"),
		register("w4", "GPU-40"),
		migWorker("w5"),
		submit("whole", 1, 2),
		shareJob("share", 1, 10*gib, api.SharingUnenforced),
	)
	mustApply(t, s,
		command.AssignTask{TaskID: "whole-a", WorkerID: "w1", AttemptID: "a1", Devices: []string{"GPU-10", "GPU-11"}, Now: at(2)},
		command.AssignTask{TaskID: "share-a", WorkerID: "w2", AttemptID: "a2", Devices: []string{"GPU-20"}, Now: at(2)},
		command.RevokeWorker{WorkerID: "w3", By: "admin", Now: at(3)},
		control("w4", command.ActionDrain, 100),
	)
	want := map[string]GPUCounts{
		// w1: 2 held, 2 free; w5: GPU-0 free (its MIG-mode GPU-1 is
		// counted as its MIG devices); w4 draining: none; w3 revoked.
		h100:                    {Allocated: 2, Free: 3, Degraded: 1},
		"NVIDIA A100-SXM4-40GB": {Allocated: 1, Unhealthy: 1},
		h100 + " MIG 3g.40gb":   {Free: 2},
		h100 + " MIG 1g.10gb":   {Free: 1},
	}
	if got := s.Stats().GPUs; !maps.Equal(got, want) {
		t.Fatalf("GPUs = %+v\nwant   %+v", got, want)
	}

	mustApply(t, s, command.FinishTask{TaskID: "whole-a", WorkerID: "w1", AttemptID: "a1", Now: at(4)})
	want[h100] = GPUCounts{Free: 5, Degraded: 1}
	if got := s.Stats().GPUs; !maps.Equal(got, want) {
		t.Fatalf("after the task ended: GPUs = %+v\nwant   %+v", got, want)
	}
	if p := s.Stats().Pending; p != 0 {
		t.Errorf("Pending = %d, want 0 (both tasks were placed)", p)
	}
}
