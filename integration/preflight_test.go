//go:build cgo && linux

package integration

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/agent/devices/nvml/nvmltest"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// A gang job with preflight on a real agent on the mock DGX H100, one of
// whose GPUs has an NVLink down: the rank placed there fails its NVLink
// check before the gang meets, the GPU is reported unhealthy with the
// figures (and stays so), the gang is placed again on sound GPUs and
// succeeds with its one attempt unspent; every check, the skipped CUDA
// ones said so, and the time taken are in the tasks' logs, and how each
// attempt's preflight went is shown on it.
func TestPreflightReplacesAGangOffABadGPU(t *testing.T) {
	h := startCoordinator(t)
	admin := h.Client(t, h.AdminToken)
	m := nvmltest.New("dgxh100", nvmltest.StableUUIDs(), nvmltest.WithTopology(nvmltest.TopologyNVSwitch))
	ra := startAgent(t, h.URL, h.JoinToken, "preflighter", "", agentOpts{source: fixtureSource(t, m), healthPoll: 50 * time.Millisecond})
	device := func(uuid string) api.Device { return deviceOf(t, admin, "preflighter", uuid) }
	waitHealthy(t, admin, "preflighter", ra.gpus)
	// Only GPUs 0 and 1 are offered; GPU 1 has link 3 down.
	for _, g := range ra.gpus[2:] {
		if _, err := admin.CordonGPU(t.Context(), "preflighter", g.UUID, "kept for the test"); err != nil {
			t.Fatal(err)
		}
	}
	good, bad, spare := ra.gpus[0].UUID, ra.gpus[1].UUID, ra.gpus[2].UUID
	m.SetNvLinkState(1, 3, false)

	spec := execSpec("true", 1)
	spec.Count, spec.Gang, spec.Preflight, spec.MaxAttempts = 2, true, true, 1
	job, err := admin.SubmitJob(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	coordinatortest.WaitFor(t, 30*time.Second, "the bad GPU to be reported unhealthy by its preflight", func() bool {
		d := device(bad)
		return !d.Healthy && strings.Contains(d.HealthReason, "preflight failed: nvlink: 1 of 18 NVLinks down (links 3)")
	})
	if _, err := admin.UncordonGPU(t.Context(), "preflighter", spare); err != nil {
		t.Fatal(err)
	}
	done := waitJob(t, admin, job.ID, terminal, "the gang to end")
	if done.State != api.TaskSucceeded {
		t.Fatalf("the gang ended %s: %+v", done.State, done.Tasks)
	}
	var lost bool
	for _, task := range done.Tasks {
		for _, at := range task.Attempts[:len(task.Attempts)-1] {
			lost = lost || (slices.Contains(at.Devices, bad) && at.State == api.AttemptLost &&
				strings.Contains(at.Reason, "preflight: GPU "+bad+" failed its nvlink check: 1 of 18 NVLinks down (links 3)") &&
				at.Preflight != nil && at.Preflight.Outcome == api.PreflightFailed && at.Preflight.BoundMS == 120000 &&
				at.Preflight.Failed == "GPU "+bad+": nvlink: 1 of 18 NVLinks down (links 3)")
		}
		last := task.Attempts[len(task.Attempts)-1]
		if slices.Contains(last.Devices, bad) {
			t.Fatalf("the gang ran on the bad GPU: %+v", last)
		}
		// The passed preflight went with the start: its outcome, time,
		// bound and checks (six a GPU; the CUDA ones skipped).
		if p := last.Preflight; p == nil || p.Outcome != api.PreflightPassed || p.BoundMS != 120000 || p.Checks != 6 || p.Skipped < 3 || p.DurationMS < 0 {
			t.Fatalf("the attempt that ran shows preflight %+v", p)
		}
	}
	if !lost {
		t.Fatalf("no attempt lost to the preflight: %+v", done.Tasks)
	}
	var logs strings.Builder
	if err := admin.Logs(t.Context(), job.ID, false, func(e api.LogEntry) error { logs.WriteString(e.Data); return nil }); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"[gpulayer] preflight: GPU " + good + ": nvlink: pass: 18/18 NVLinks active",
		"[gpulayer] preflight: GPU " + good + ": matmul: skipped: no CUDA",
		"[gpulayer] preflight: GPU " + good + ": p2p-bandwidth: skipped: no CUDA",
		"[gpulayer] preflight: passed in ",
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the logs lack %q:\n%s", want, logs.String())
		}
	}
	if d := device(bad); d.Healthy {
		t.Fatalf("the bad GPU came back by itself: %+v", d)
	}
}
