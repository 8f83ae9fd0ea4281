package state

import (
	"errors"
	"reflect"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// The fleet's GPU read names, for each device, the tasks that hold it:
// whole, or by their shares; a worker id narrows it, an unknown one is
// not found.
func TestFleetGPUsNamesWhatHoldsEachGPU(t *testing.T) {
	s := New()
	mustApply(t, s, register("w2", "GPU-2a", "GPU-2b"), register("w1", "GPU-1"),
		submit("whole", 1, 1),
		shareJob("sa", 1, 30*gib, api.SharingUnenforced), shareJob("sb", 1, 20*gib, api.SharingUnenforced),
		command.AssignTask{TaskID: "whole-a", WorkerID: "w2", AttemptID: "a1", Devices: []string{"GPU-2b"}, Now: at(2)},
		command.AssignTask{TaskID: "sb-a", WorkerID: "w1", AttemptID: "a3", Devices: []string{"GPU-1"}, Now: at(2)},
		command.AssignTask{TaskID: "sa-a", WorkerID: "w1", AttemptID: "a2", Devices: []string{"GPU-1"}, Now: at(2)})
	all, err := s.FleetGPUs("")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || all[0].Worker.Worker.ID != "w1" || all[1].Worker.Worker.ID != "w2" {
		t.Fatalf("workers: %+v", all)
	}
	want := map[string][]GPUHolder{"GPU-1": {
		{TaskID: "sa-a", JobID: "sa", AttemptID: "a2", ShareMiB: 30 * gib},
		{TaskID: "sb-a", JobID: "sb", AttemptID: "a3", ShareMiB: 20 * gib},
	}}
	if !reflect.DeepEqual(all[0].Holders, want) {
		t.Fatalf("w1 holders %+v, want %+v", all[0].Holders, want)
	}
	one, err := s.FleetGPUs("w2")
	if err != nil || len(one) != 1 {
		t.Fatalf("w2: %+v %v", one, err)
	}
	if got := one[0].Holders; !reflect.DeepEqual(got, map[string][]GPUHolder{"GPU-2b": {{TaskID: "whole-a", JobID: "whole", AttemptID: "a1"}}}) {
		t.Fatalf("w2 holders %+v", got)
	}
	if _, err := s.FleetGPUs("ghost"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown worker: %v", err)
	}
}
