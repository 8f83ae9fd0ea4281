//go:build cgo && linux

package integration

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/agent/devices/nvml/nvmltest"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// End to end on a DGX-1 (V100 hybrid cube mesh) fixture: the agent reads
// and reports the topology, and a four-GPU task gets a fully connected
// quad with CUDA_VISIBLE_DEVICES in chain order (each GPU followed by its
// best-linked peer), not the first four free GPUs in index order.
func TestFourGPUTaskGetsAConnectedQuad(t *testing.T) {
	h := startCoordinator(t)
	admin := h.Client(t, h.AdminToken)
	m := nvmltest.New("dgxh100", nvmltest.StableUUIDs(), nvmltest.WithTopology(nvmltest.TopologyDGX1))
	ra := startAgent(t, h.URL, h.JoinToken, "dgx1", "", agentOpts{source: fixtureSource(t, m)})
	coordinatortest.WaitFor(t, 30*time.Second, "the worker's topology", func() bool {
		w, err := admin.Worker(t.Context(), "dgx1")
		return err == nil && len(w.Devices) == 8 && len(w.Devices[0].Links) == 7
	})
	// One GPU is taken first, so one quad is not free.
	uuid := func(i int) string {
		return ra.gpus[slices.IndexFunc(ra.gpus, func(d api.Device) bool { return d.Index == i })].UUID
	}
	hold, err := json.Marshal(api.ExecConfig{Command: "sleep", Args: []string{"60"}})
	if err != nil {
		t.Fatal(err)
	}
	holder, err := admin.SubmitJob(t.Context(), api.JobSpec{Executor: "exec", Config: hold, Resources: &api.Resources{GPUs: 1}})
	if err != nil {
		t.Fatal(err)
	}
	busy := waitJob(t, admin, holder.ID, func(j api.Job) bool { return j.Tasks[0].State == api.TaskRunning }, "the one-GPU task to hold a GPU").Tasks[0].Devices[0]
	print, err := json.Marshal(api.ExecConfig{Command: "sh", Args: []string{"-c", `echo "$CUDA_VISIBLE_DEVICES"`}})
	if err != nil {
		t.Fatal(err)
	}
	job, err := admin.SubmitJob(t.Context(), api.JobSpec{Executor: "exec", Config: print, Resources: &api.Resources{GPUs: 4}})
	if err != nil {
		t.Fatal(err)
	}
	done := waitJob(t, admin, job.ID, func(j api.Job) bool { return j.State == api.TaskSucceeded }, "the four-GPU task to succeed")
	// The quad that does not hold the busy GPU, chained by double links.
	var want []string
	if slices.Contains([]string{uuid(0), uuid(1), uuid(2), uuid(3)}, busy) {
		want = []string{uuid(4), uuid(7), uuid(6), uuid(5)}
	} else {
		want = []string{uuid(0), uuid(3), uuid(2), uuid(1)}
	}
	if got := done.Tasks[0].Devices; !slices.Equal(got, want) {
		t.Fatalf("devices %v, want %v (GPU %s busy)", got, want, busy)
	}
	if out := strings.TrimSpace(logsOf(t, admin, job.ID)); out != strings.Join(want, ",") {
		t.Fatalf("CUDA_VISIBLE_DEVICES %q, want %q", out, strings.Join(want, ","))
	}
}
