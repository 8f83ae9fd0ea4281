package view

import (
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Each GPU row says how the GPU is used and by which tasks, and shows the
// device as its worker's record does (a revoked worker's GPU not
// healthy).
func TestGPURows(t *testing.T) {
	devs := []command.Device{
		{UUID: "GPU-free", Healthy: true, MemoryMiB: 80},
		{UUID: "GPU-whole", Healthy: true, MemoryMiB: 80},
		{UUID: "GPU-shared", Healthy: true, MemoryMiB: 80},
		{UUID: "GPU-mig", Healthy: true, MIGEnabled: true},
		{UUID: "MIG-1", Healthy: true, Parent: "GPU-mig", MIGProfile: "1g.10gb"},
	}
	ws := []state.WorkerGPUs{
		{Worker: state.WorkerRecord{Worker: state.Worker{ID: "w1", Status: api.WorkerReady, Devices: devs}}, Holders: map[string][]state.GPUHolder{
			"GPU-whole":  {{TaskID: "t1", JobID: "j1"}},
			"GPU-shared": {{TaskID: "t2", JobID: "j2", ShareMiB: 30}, {TaskID: "t3", JobID: "j3", ShareMiB: 20}},
			"MIG-1":      {{TaskID: "t4", JobID: "j4"}},
		}},
		{Worker: state.WorkerRecord{Worker: state.Worker{ID: "w2", Status: api.WorkerRevoked, Devices: devs[:1]}}},
	}
	cases := []struct {
		worker, uuid, use string
		shared            uint64
		tasks             int
		healthy           bool
	}{
		{"w1", "GPU-free", api.GPUFree, 0, 0, true},
		{"w1", "GPU-whole", api.GPUWhole, 0, 1, true},
		{"w1", "GPU-shared", api.GPUShared, 50, 2, true},
		{"w1", "GPU-mig", api.GPUMIG, 0, 0, true},
		{"w1", "MIG-1", api.GPUWhole, 0, 1, true},
		{"w2", "GPU-free", api.GPUFree, 0, 0, false},
	}
	rows := GPUs(ws)
	if len(rows) != len(cases) {
		t.Fatalf("%d rows, want %d", len(rows), len(cases))
	}
	for i, c := range cases {
		r := rows[i]
		if r.WorkerID != c.worker || r.UUID != c.uuid || r.Use != c.use || r.SharedMiB != c.shared || len(r.Tasks) != c.tasks || r.Healthy != c.healthy {
			t.Errorf("row %d: %+v, want %+v", i, r, c)
		}
		if r.Tasks == nil {
			t.Errorf("row %d: tasks render as null", i)
		}
	}
}
