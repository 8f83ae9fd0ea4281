package state

import (
	"slices"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// The store hands a multi-GPU task the best-connected free GPUs (package
// fit chooses them), in the chain order fit gives them, which is the
// order the agent writes CUDA_VISIBLE_DEVICES in: with GPU-c busy, a 3-GPU
// task gets a, d and b, d NVLinked to both, as the chain a d b (not
// index order).
func TestMatchPicksTheBestConnectedGPUs(t *testing.T) {
	s := New()
	w := register("w1", "GPU-a", "GPU-b", "GPU-c", "GPU-d", "GPU-e")
	nvlinked := map[[2]string]bool{{"GPU-a", "GPU-d"}: true, {"GPU-b", "GPU-d"}: true}
	for i, x := range w.Devices {
		for j, y := range w.Devices {
			if i == j {
				continue
			}
			l := command.DeviceLink{Peer: y.UUID, Path: api.PathSys}
			if nvlinked[[2]string{x.UUID, y.UUID}] || nvlinked[[2]string{y.UUID, x.UUID}] {
				l = command.DeviceLink{Peer: y.UUID, Path: api.PathNvLink, NvLinks: 4}
			}
			w.Devices[i].Links = append(w.Devices[i].Links, l)
		}
	}
	mustApply(t, s, w, submit("busy", 1, 1), command.AssignTask{TaskID: "busy-a", WorkerID: "w1", AttemptID: "a1", Devices: []string{"GPU-c"}, Now: at(2)},
		submit("j", 1, 3))
	free := slices.DeleteFunc(slices.Clone(w.Devices), func(d command.Device) bool { return d.UUID == "GPU-c" })
	want := fit.PickConnected(free, 3)
	if !slices.Equal(want, []string{"GPU-a", "GPU-d", "GPU-b"}) {
		t.Fatalf("the fixture: fit picks %v, want the chain a d b", want)
	}
	cand, ok, err := s.Match("w1", "", nil)
	if err != nil || !ok || cand.TaskID != "j-a" {
		t.Fatalf("match: %+v %v %v", cand, ok, err)
	}
	if !slices.Equal(cand.Devices, want) {
		t.Fatalf("devices %v, want %v, in that order", cand.Devices, want)
	}
}
