package integration

import (
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// MIG end to end on a real agent: a task asking for a MIG profile runs
// with CUDA_VISIBLE_DEVICES naming its MIG device, a whole-GPU task beside
// it gets the GPU that is not in MIG mode, and a second whole-GPU task
// waits: the GPU in MIG mode is never handed out whole.
func TestMIGDevicesRunTasksBesideWholeGPUs(t *testing.T) {
	h := startCoordinator(t)
	admin := h.Client(t, h.AdminToken)
	whole, parent := h100(0, "GPU-whole"), h100(1, "GPU-parted")
	parent.MIGEnabled = true
	slice := func(uuid, profile string, mib uint64) api.Device {
		return api.Device{Index: 1, UUID: uuid, Name: "NVIDIA H100 80GB HBM3 MIG " + profile, MemoryMiB: mib, ComputeCapability: "9.0", Healthy: true, Parent: "GPU-parted", MIGProfile: profile}
	}
	src := &changingGPUs{devs: []api.Device{whole, parent, slice("MIG-aaaa", "3g.40gb", 40448), slice("MIG-bbbb", "1g.10gb", 9984)}}
	startAgent(t, h.URL, h.JoinToken, "migged", "", agentOpts{source: src})
	coordinatortest.WaitFor(t, 10*time.Second, "registration", func() bool {
		w, err := admin.Worker(t.Context(), "migged")
		return err == nil && len(w.Devices) == 4
	})
	hold := `echo "gpus=$CUDA_VISIBLE_DEVICES"; sleep 2`
	mig := execSpec(hold, 1)
	mig.Resources.MIGProfile = "1g.10gb"
	migJob, err := admin.SubmitJob(t.Context(), mig)
	if err != nil {
		t.Fatal(err)
	}
	first, err := admin.SubmitJob(t.Context(), execSpec(hold, 1))
	if err != nil {
		t.Fatal(err)
	}
	second, err := admin.SubmitJob(t.Context(), execSpec(`echo "gpus=$CUDA_VISIBLE_DEVICES"`, 1))
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{migJob.ID: "gpus=MIG-bbbb", first.ID: "gpus=GPU-whole"} {
		j := waitJob(t, admin, id, terminal, "job "+id)
		if j.State != api.TaskSucceeded || !strings.Contains(logsOf(t, admin, id), want) {
			t.Fatalf("job %s: %s, logs %q, want %q", id, j.State, logsOf(t, admin, id), want)
		}
	}
	// The second whole-GPU task ran only after the first freed GPU-whole.
	j := waitJob(t, admin, second.ID, terminal, "the second whole-GPU job")
	if j.State != api.TaskSucceeded || !strings.Contains(logsOf(t, admin, second.ID), "gpus=GPU-whole") {
		t.Fatalf("second job %s: %q", j.State, logsOf(t, admin, second.ID))
	}
	f, _ := admin.Job(t.Context(), first.ID)
	started, err1 := time.Parse(time.RFC3339Nano, j.Tasks[0].Attempts[0].StartedAt)
	ended, err2 := time.Parse(time.RFC3339Nano, f.Tasks[0].Attempts[0].EndedAt)
	if err1 != nil || err2 != nil || started.Before(ended) {
		t.Fatalf("the second whole-GPU task started at %s, before the first ended at %s", j.Tasks[0].Attempts[0].StartedAt, f.Tasks[0].Attempts[0].EndedAt)
	}
}
