package state

import (
	"slices"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// migWorker registers a worker with two GPUs: GPU-0 whole, GPU-1 in MIG
// mode split into two 3g.40gb devices and one 1g.10gb.
func migWorker(id string) command.RegisterWorker {
	c := register(id)
	whole, parent := gpus("GPU-0", "GPU-1")[0], gpus("GPU-0", "GPU-1")[1]
	parent.MIGEnabled = true
	mig := func(uuid, profile string, mib uint64) command.Device {
		return command.Device{Index: 1, UUID: uuid, Name: "NVIDIA H100 80GB HBM3 MIG " + profile, MemoryMiB: mib, Healthy: true, Parent: "GPU-1", MIGProfile: profile}
	}
	c.Devices = []command.Device{whole, parent, mig("MIG-a", "3g.40gb", 40448), mig("MIG-b", "3g.40gb", 40448), mig("MIG-c", "1g.10gb", 9984)}
	return c
}

func migJob(id, profile string, count, n int) command.SubmitJob {
	c := submit(id, count, n)
	c.Spec.Resources.MIGProfile = profile
	return c
}

// A task asking for a MIG profile gets MIG devices of that profile only;
// one asking for whole GPUs never gets a GPU in MIG mode nor a MIG
// device: nothing is counted twice.
func TestMIGDevicesAreGivenByProfileAndNeverTwice(t *testing.T) {
	cases := []struct {
		name string
		job  command.SubmitJob
		want []string // devices, or nil for no match
	}{
		{"one 3g.40gb", migJob("a", "3g.40gb", 1, 1), []string{"MIG-a"}},
		{"two 3g.40gb", migJob("a", "3g.40gb", 1, 2), []string{"MIG-a", "MIG-b"}},
		{"three 3g.40gb: only two", migJob("a", "3g.40gb", 1, 3), nil},
		{"a 1g.10gb", migJob("a", "1g.10gb", 1, 1), []string{"MIG-c"}},
		{"a profile no GPU has", migJob("a", "7g.80gb", 1, 1), nil},
		{"one whole GPU: not the one in MIG mode", submit("a", 1, 1), []string{"GPU-0"}},
		{"two whole GPUs: one is in MIG mode", submit("a", 1, 2), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New()
			mustApply(t, s, migWorker("w1"), c.job)
			cand, ok, _ := s.Match("w1", "", nil)
			switch {
			case c.want == nil && ok:
				t.Fatalf("matched %v, want nothing", cand.Devices)
			case c.want != nil && (!ok || !slices.Equal(sorted(cand.Devices), c.want)):
				t.Fatalf("matched %v (%v), want %v", cand.Devices, ok, c.want)
			}
		})
	}
	// Two MIG tasks at once use distinct devices, and a whole-GPU task
	// beside them gets the whole GPU.
	s := New()
	mustApply(t, s, migWorker("w1"), migJob("m", "3g.40gb", 2, 1), submit("g", 1, 1))
	var held []string
	for i := range 3 {
		cand, ok, _ := s.Match("w1", "", nil)
		if !ok {
			t.Fatalf("match %d: nothing", i)
		}
		mustApply(t, s, command.AssignTask{TaskID: cand.TaskID, WorkerID: "w1", AttemptID: "a" + cand.TaskID, Devices: cand.Devices, Now: at(2)})
		held = append(held, cand.Devices...)
	}
	if got := sorted(held); !slices.Equal(got, []string{"GPU-0", "MIG-a", "MIG-b"}) {
		t.Fatalf("held %v", got)
	}
	if j, _ := s.Job("m"); j.PendingReason != "" {
		t.Fatalf("pending reason %q", j.PendingReason)
	}
	mustApply(t, s, migJob("x", "7g.80gb", 1, 1))
	if j, _ := s.Job("x"); j.PendingReason != "needs 1 GPUs (MIG devices of profile 7g.80gb); the most any live worker has is 0" {
		t.Fatalf("pending reason %q", j.PendingReason)
	}
}

func sorted(s []string) []string { return slices.Sorted(slices.Values(s)) }
