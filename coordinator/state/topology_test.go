package state

import (
	"slices"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// The store places a multi-GPU task on the best-connected free GPUs
// (package fit chooses them): with GPU-a busy, the NVLinked pair c and d,
// not the first free GPUs in index order, b and c.
func TestMatchPicksTheBestConnectedGPUs(t *testing.T) {
	s := New()
	w := register("w1", "GPU-a", "GPU-b", "GPU-c", "GPU-d")
	link := func(i, j int) command.DeviceLink {
		if (i == 2 && j == 3) || (i == 3 && j == 2) {
			return command.DeviceLink{Peer: w.Devices[j].UUID, Path: api.PathNvLink, NvLinks: 4}
		}
		return command.DeviceLink{Peer: w.Devices[j].UUID, Path: api.PathSys}
	}
	for i := range w.Devices {
		for j := range w.Devices {
			if i != j {
				w.Devices[i].Links = append(w.Devices[i].Links, link(i, j))
			}
		}
	}
	mustApply(t, s, w, submit("busy", 1, 1), command.AssignTask{TaskID: "busy-a", WorkerID: "w1", AttemptID: "a1", Devices: []string{"GPU-a"}, Now: at(2)},
		submit("j", 1, 2))
	cand, ok, err := s.Match("w1", "", nil)
	if err != nil || !ok || cand.TaskID != "j-a" {
		t.Fatalf("match: %+v %v %v", cand, ok, err)
	}
	if got := slices.Sorted(slices.Values(cand.Devices)); !slices.Equal(got, []string{"GPU-c", "GPU-d"}) {
		t.Fatalf("devices %v, want the NVLinked pair GPU-c and GPU-d", cand.Devices)
	}
}
