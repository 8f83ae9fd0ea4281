package state

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/sdk/api"
)

const gib = 1024 // MiB

// shareJob is a job of count tasks, each taking mib of one GPU's memory
// under mode.
func shareJob(id string, count int, mib uint64, mode string) command.SubmitJob {
	c := submit(id, count, 1)
	c.Spec.Resources.GPUMemoryMiB = mib
	c.Spec.Resources.GPUSharing = mode
	return c
}

// mpsWorker registers a worker whose GPUs all enforce shares through MPS.
func mpsWorker(id string, devs ...string) command.RegisterWorker {
	c := register(id, devs...)
	for i := range c.Devices {
		c.Devices[i].Sharing = api.DeviceSharingMPS
	}
	return c
}

// placeOn matches worker w and assigns what it matched, reporting the
// task and its devices, or ok false when nothing matched.
func placeOn(t *testing.T, s *Store, w string) (task string, devs []string, ok bool) {
	t.Helper()
	cand, ok, err := s.Match(w, "", nil)
	if err != nil || !ok {
		return "", nil, false
	}
	mustApply(t, s, command.AssignTask{TaskID: cand.TaskID, WorkerID: w, AttemptID: "a-" + cand.TaskID, Devices: cand.Devices, Now: at(2)})
	return cand.TaskID, cand.Devices, true
}

// Two tasks of 30 and 40 GiB share one 80 GiB GPU; a third of 20 GiB
// does not fit beside them, and takes the room the first leaves when it
// ends.
func TestSharedTasksSplitOneGPUByMemory(t *testing.T) {
	s := New()
	mustApply(t, s, register("w1", "GPU-0"),
		shareJob("a", 1, 30*gib, api.SharingUnenforced),
		shareJob("b", 1, 40*gib, api.SharingUnenforced))
	for _, want := range []string{"a-a", "b-a"} {
		task, devs, ok := placeOn(t, s, "w1")
		if !ok || task != want || !slices.Equal(devs, []string{"GPU-0"}) {
			t.Fatalf("placed %s on %v (%v), want %s on GPU-0", task, devs, ok, want)
		}
	}
	mustApply(t, s, shareJob("c", 1, 20*gib, api.SharingUnenforced))
	if task, devs, ok := placeOn(t, s, "w1"); ok {
		t.Fatalf("%s placed on %v beside 70 GiB of shares on an 80 GiB GPU", task, devs)
	}
	// An assignment the state did not match is checked all the same.
	r := apply(t, s, command.AssignTask{TaskID: "c-a", WorkerID: "w1", AttemptID: "forced", Devices: []string{"GPU-0"}, Now: at(2)})
	if !errors.Is(r.Err(), ErrConflict) {
		t.Fatalf("forced over-full share: %v, want a conflict", r.Err())
	}
	if j, _ := s.Job("c"); j.PendingReason != "" {
		t.Fatalf("a share that fits an empty GPU waits for room without a reason; got %q", j.PendingReason)
	}
	mustApply(t, s, command.FinishTask{TaskID: "a-a", WorkerID: "w1", AttemptID: "a-a-a", Now: at(3)})
	if task, devs, ok := placeOn(t, s, "w1"); !ok || task != "c-a" || !slices.Equal(devs, []string{"GPU-0"}) {
		t.Fatalf("after the 30 GiB task ended: placed %s on %v (%v), want c-a on GPU-0", task, devs, ok)
	}
}

// An exclusive task never gets a GPU a shared task holds, nor a shared
// task one an exclusive task holds; shares go to the fullest GPU they
// fit, leaving whole GPUs whole.
func TestExclusiveAndSharedNeverMix(t *testing.T) {
	s := New()
	mustApply(t, s, register("w1", "GPU-0", "GPU-1"), shareJob("a", 1, 10*gib, api.SharingUnenforced))
	if _, devs, ok := placeOn(t, s, "w1"); !ok || !slices.Equal(devs, []string{"GPU-0"}) {
		t.Fatalf("first share on %v (%v)", devs, ok)
	}
	mustApply(t, s, shareJob("b", 1, 10*gib, api.SharingUnenforced))
	if _, devs, ok := placeOn(t, s, "w1"); !ok || !slices.Equal(devs, []string{"GPU-0"}) {
		t.Fatalf("second share on %v (%v), want beside the first on GPU-0", devs, ok)
	}
	mustApply(t, s, submit("x", 2, 1))
	if _, devs, ok := placeOn(t, s, "w1"); !ok || !slices.Equal(devs, []string{"GPU-1"}) {
		t.Fatalf("exclusive task on %v (%v), want GPU-1", devs, ok)
	}
	if task, devs, ok := placeOn(t, s, "w1"); ok {
		t.Fatalf("exclusive %s placed on %v, a shared GPU", task, devs)
	}
	if r := apply(t, s, command.AssignTask{TaskID: "x-b", WorkerID: "w1", AttemptID: "forced", Devices: []string{"GPU-0"}, Now: at(2)}); !errors.Is(r.Err(), ErrConflict) {
		t.Fatalf("forced exclusive onto a shared GPU: %v", r.Err())
	}
	mustApply(t, s, command.CancelJob{JobID: "x", Now: at(3)})
	mustApply(t, s, shareJob("c", 1, 70*gib, api.SharingUnenforced))
	// 20 GiB held of GPU-0's 79.6: 70 more does not fit there, and GPU-1
	// is an exclusive task's until the cancel is seen through.
	if task, devs, ok := placeOn(t, s, "w1"); ok && slices.Equal(devs, []string{"GPU-0"}) {
		t.Fatalf("%s overfilled GPU-0", task)
	}
}

// A GPU in MIG mode and its MIG devices are never shared; "enforced" goes
// only to GPUs that report how they enforce it.
func TestSharingSkipsMIGAndUnenforcingGPUs(t *testing.T) {
	cases := []struct {
		name   string
		worker command.RegisterWorker
		job    command.SubmitJob
		want   []string // nil: no match
		reason string   // the job's pending reason, when nothing matched
	}{
		{"unenforced on a plain GPU", register("w1", "GPU-0"), shareJob("a", 1, gib, api.SharingUnenforced), []string{"GPU-0"}, ""},
		{"enforced on a plain GPU", register("w1", "GPU-0"), shareJob("a", 1, gib, api.SharingEnforced), nil, "needs a share of 1024 MiB of one GPU that enforces it (MPS); no live worker has such a GPU"},
		{"enforced under MPS", mpsWorker("w1", "GPU-0"), shareJob("a", 1, gib, api.SharingEnforced), []string{"GPU-0"}, ""},
		{"unenforced under MPS", mpsWorker("w1", "GPU-0"), shareJob("a", 1, gib, api.SharingUnenforced), []string{"GPU-0"}, ""},
		{"MIG: only the whole GPU", migWorker("w1"), shareJob("a", 1, gib, api.SharingUnenforced), []string{"GPU-0"}, ""},
		{"share above the GPU", register("w1", "GPU-0"), shareJob("a", 1, 90*gib, api.SharingUnenforced), nil, "needs a share of 92160 MiB of one GPU; no live worker has such a GPU"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New()
			mustApply(t, s, c.worker, c.job)
			cand, ok, _ := s.Match("w1", "", nil)
			switch {
			case c.want == nil && ok:
				t.Fatalf("matched %v, want nothing", cand.Devices)
			case c.want != nil && (!ok || !slices.Equal(cand.Devices, c.want)):
				t.Fatalf("matched %v (%v), want %v", cand.Devices, ok, c.want)
			}
			if j, _ := s.Job("a"); j.PendingReason != c.reason {
				t.Fatalf("pending reason %q, want %q", j.PendingReason, c.reason)
			}
		})
	}
	// With the whole GPU held by shares, the MIG-mode GPU is still never
	// shared.
	s := New()
	mustApply(t, s, migWorker("w1"), shareJob("a", 3, 30*gib, api.SharingUnenforced))
	var held []string
	for range 3 {
		if _, devs, ok := placeOn(t, s, "w1"); ok {
			held = append(held, devs...)
		}
	}
	if !slices.Equal(held, []string{"GPU-0", "GPU-0"}) {
		t.Fatalf("three 30 GiB shares on a worker with one whole 80 GiB GPU went to %v", held)
	}
	if r := apply(t, s, command.AssignTask{TaskID: "a-c", WorkerID: "w1", AttemptID: "forced", Devices: []string{"GPU-1"}, Now: at(2)}); !errors.Is(r.Err(), ErrConflict) {
		t.Fatalf("forced share onto a GPU in MIG mode: %v", r.Err())
	}
	if r := apply(t, s, command.AssignTask{TaskID: "a-c", WorkerID: "w1", AttemptID: "forced", Devices: []string{"MIG-a"}, Now: at(2)}); !errors.Is(r.Err(), ErrConflict) {
		t.Fatalf("forced share onto a MIG device: %v", r.Err())
	}
	if r := apply(t, s, command.AssignTask{TaskID: "a-c", WorkerID: "w1", AttemptID: "forced", Devices: []string{"GPU-0", "GPU-0"}, Now: at(2)}); !errors.Is(r.Err(), ErrConflict) {
		t.Fatalf("forced share onto two devices: %v", r.Err())
	}
	if j, _ := s.Job("a"); !strings.Contains(j.Tasks[2].State, "pending") {
		t.Fatalf("refused assignments changed the task: %s", j.Tasks[2].State)
	}
}
