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
	"github.com/gpulayer/gpulayer/sdk/client"
)

// A real agent on go-nvml's A100 mock repartitions GPUs an admin asks
// for: a GPU with a running task waits for it (the layout stays pending,
// the GPU whole in NVML) and is split once the task ends; its new MIG
// devices are offered and a MIG task runs on one. A repartition NVML
// refuses part-way is reported failed with the reason on the record,
// and asking again applies it. The GPUs are named as real A100s, whose
// MIG profiles the coordinator knows.
func TestMIGRepartitionWithARealAgent(t *testing.T) {
	h := startCoordinator(t)
	admin := h.Client(t, h.AdminToken)
	m := nvmltest.New("dgxa100", nvmltest.StableUUIDs(), nvmltest.WithModelName("NVIDIA A100-SXM4-40GB"))
	ra := startAgent(t, h.URL, h.JoinToken, "splitter", "", agentOpts{source: fixtureSource(t, m), healthPoll: 50 * time.Millisecond, migDrainBound: time.Minute})
	worker := func() api.Worker {
		w, err := admin.Worker(t.Context(), "splitter")
		if err != nil {
			return api.Worker{}
		}
		return w
	}
	layoutOf := func(w api.Worker, uuid string) *api.MIGLayout {
		i := slices.IndexFunc(w.MIGLayouts, func(l api.MIGLayout) bool { return l.UUID == uuid })
		if i < 0 {
			return nil
		}
		return &w.MIGLayouts[i]
	}
	coordinatortest.WaitFor(t, 30*time.Second, "every GPU to be reported healthy", func() bool {
		w := worker()
		return len(w.Devices) == len(ra.gpus) && !slices.ContainsFunc(w.Devices, func(d api.Device) bool { return !d.Healthy })
	})

	job, running := startStoppedOnceJob(t, admin, 1)
	busy := running.Tasks[0].Devices[0]
	index := slices.IndexFunc(ra.gpus, func(d api.Device) bool { return d.UUID == busy })
	if _, err := admin.SetMIGLayout(t.Context(), "splitter", busy, []string{"3g.20gb", "3g.20gb"}); err != nil {
		t.Fatal(err)
	}
	// The task holds the GPU: nothing changes while it runs, though the
	// agent has been told (heartbeats answered since the request).
	asked := time.Now()
	coordinatortest.WaitFor(t, 30*time.Second, "three heartbeats after the request", func() bool {
		last, err := time.Parse(time.RFC3339Nano, worker().LastHeartbeat)
		return err == nil && last.After(asked.Add(300*time.Millisecond))
	})
	if l := layoutOf(worker(), busy); l == nil || l.State != api.MIGLayoutPending {
		t.Fatalf("the busy GPU's layout: %+v, want pending", l)
	}
	if mode, _, _ := m.Device(index).GetMigMode(); mode != gonvml.DEVICE_MIG_DISABLE {
		t.Fatalf("the GPU went into MIG mode under its task")
	}
	if _, err := admin.CancelJob(t.Context(), job.ID); err != nil {
		t.Fatal(err)
	}
	coordinatortest.WaitFor(t, 30*time.Second, "the layout to be applied once the task ended", func() bool {
		l := layoutOf(worker(), busy)
		return l != nil && l.State == api.MIGLayoutApplied
	})
	w := worker()
	var migs []string
	for _, d := range w.Devices {
		if d.Parent == busy {
			if d.MIGProfile != "3g.20gb" || !d.Healthy || d.PendingApproval {
				t.Errorf("MIG device %+v", d)
			}
			migs = append(migs, d.UUID)
		}
	}
	if len(migs) != 2 {
		t.Fatalf("MIG devices of %s: %v", busy, migs)
	}
	spec := execSpec("true", 1)
	spec.Resources.MIGProfile = "3g.20gb"
	mj, err := admin.SubmitJob(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	done := waitJob(t, admin, mj.ID, terminal, "the MIG task to end")
	if done.State != api.TaskSucceeded || !slices.Contains(migs, done.Tasks[0].Attempts[0].Devices[0]) {
		t.Fatalf("the MIG task: %s on %v", done.State, done.Tasks[0].Attempts[0].Devices)
	}

	// NVML refuses a step: the request fails with NVML's word on it.
	other := ra.gpus[(index+1)%len(ra.gpus)].UUID
	m.Fail((index+1)%len(ra.gpus), "CreateGpuInstanceWithPlacement", gonvml.ERROR_INSUFFICIENT_RESOURCES, nvmltest.Once)
	if _, err := admin.SetMIGLayout(t.Context(), "splitter", other, []string{"7g.40gb"}); err != nil {
		t.Fatal(err)
	}
	coordinatortest.WaitFor(t, 30*time.Second, "the refused repartition to be reported", func() bool {
		l := layoutOf(worker(), other)
		return l != nil && l.State == api.MIGLayoutFailed
	})
	w = worker()
	i := slices.IndexFunc(w.Devices, func(d api.Device) bool { return d.UUID == other })
	if l := layoutOf(w, other); !strings.Contains(l.Reason, "insufficient resources") || w.Devices[i].Healthy || !strings.Contains(w.Devices[i].HealthReason, "MIG repartition to 7g.40gb failed") {
		t.Fatalf("the failed request %+v, its GPU %+v", l, w.Devices[i])
	}
	if _, err := admin.SetMIGLayout(t.Context(), "splitter", other, []string{"7g.40gb"}); err != nil {
		t.Fatal(err)
	}
	coordinatortest.WaitFor(t, 30*time.Second, "the retried layout to be applied", func() bool {
		l := layoutOf(worker(), other)
		return l != nil && l.State == api.MIGLayoutApplied
	})
	audit, err := admin.Audit(t.Context(), client.AuditQuery{Kinds: []string{"gpu.mig_applied", "gpu.mig_failed"}})
	if err != nil || len(audit.Events) != 3 {
		t.Fatalf("audit %+v %v", audit, err)
	}
}
