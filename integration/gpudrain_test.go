//go:build cgo && linux

package integration

import (
	"slices"
	"strings"
	"testing"
	"time"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpulayer/gpulayer/agent/devices/nvml/nvmltest"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// A real agent on the mock DGX H100: a GPU whose clocks are held down by
// heat is reported degraded (offered, with the reason), and a one-GPU
// task is placed on a healthy GPU instead. An admin then drains the
// task's GPU: the agent stops the task, its attempt ends preempted naming
// the drain, and the task succeeds on another GPU with its one attempt
// unspent; the drained GPU stays cordoned.
func TestDegradedAndDrainedGPUsWithARealAgent(t *testing.T) {
	h := startCoordinator(t)
	admin := h.Client(t, h.AdminToken)
	m := nvmltest.New("dgxh100", nvmltest.StableUUIDs())
	ra := startAgent(t, h.URL, h.JoinToken, "drainee", "", agentOpts{source: fixtureSource(t, m), healthPoll: 50 * time.Millisecond})
	device := func(uuid string) api.Device { return deviceOf(t, admin, "drainee", uuid) }
	hot := ra.gpus[0].UUID
	waitHealthy(t, admin, "drainee", ra.gpus)
	m.SetClocksEventReasons(0, gonvml.ClocksThrottleReasonHwThermalSlowdown)
	coordinatortest.WaitFor(t, 30*time.Second, "the hot GPU to be reported degraded", func() bool {
		d := device(hot)
		return d.Healthy && d.Health == api.HealthDegraded && strings.Contains(d.HealthReason, "HW thermal slowdown")
	})

	job, running := startStoppedOnceJob(t, admin, 1)
	first := running.Tasks[0].Devices[0]
	if first == hot {
		t.Fatalf("the task was placed on the degraded GPU %s while healthy ones were free", hot)
	}

	if _, err := admin.DrainGPU(t.Context(), "drainee", first, "reset"); err != nil {
		t.Fatal(err)
	}
	done := waitJob(t, admin, job.ID, func(j api.Job) bool { return j.Tasks[0].State == api.TaskSucceeded },
		"the task to succeed on another GPU")
	tried := done.Tasks[0].Attempts
	if len(tried) != 2 || tried[0].State != api.AttemptPreempted || !strings.Contains(tried[0].Reason, "drained by an admin: reset") {
		t.Fatalf("attempts %+v: want the first preempted by the drain", tried)
	}
	if slices.Contains(tried[1].Devices, first) {
		t.Fatalf("the retry got the drained GPU %s", first)
	}
	if d := device(first); !d.Cordoned || d.Healthy {
		t.Fatalf("the drained GPU after the drain: %+v, want cordoned and not offered", d)
	}
}
