//go:build cgo && linux

package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/agent/devices/health"
	"github.com/gpulayer/gpulayer/agent/devices/nvml/nvmltest"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// A GPU that throws a fault while a task runs on it: the task's attempt
// ends lost naming the GPU and the XID, uses up no attempt (the job has
// one), and the task succeeds on another GPU; the GPU is reported
// unhealthy with its reason and is not handed out again; the fault is
// saved, so the agent's next start keeps it out. An application-class
// XID fails only the task's attempt (it counts: the job has two) and
// leaves the GPU in service.
func TestGPUFaultsTakeGPUsOutOfService(t *testing.T) {
	cases := []struct {
		name         string
		xid          uint64
		outOfService bool
	}{
		{"XID 48 (double-bit ECC) takes the GPU out", 48, true},
		{"XID 13 (application) fails only the task", 13, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := startCoordinator(t)
			admin := h.Client(t, h.AdminToken)
			m := nvmltest.New("dgxh100", nvmltest.StableUUIDs())
			ra := startAgent(t, h.URL, h.JoinToken, "faulty", "", agentOpts{source: fixtureSource(t, m), healthPoll: 50 * time.Millisecond})
			coordinatortest.WaitFor(t, 30*time.Second, "every GPU to be reported healthy", func() bool {
				w, err := admin.Worker(t.Context(), "faulty")
				if err != nil || len(w.Devices) != m.Count() {
					return false
				}
				for _, d := range w.Devices {
					if !d.Healthy || d.Health != api.HealthHealthy {
						return false
					}
				}
				return true
			})

			attempts := 2 // an application's fault uses one
			if c.outOfService {
				attempts = 1 // a GPU's fault uses none
			}
			job, running := startStoppedOnceJob(t, admin, attempts)
			first := running.Tasks[0].Devices[0]
			index := slices.IndexFunc(ra.gpus, func(d api.Device) bool { return d.UUID == first })
			m.InjectXid(index, c.xid)

			done := waitJob(t, admin, job.ID, func(j api.Job) bool { return j.Tasks[0].State == api.TaskSucceeded },
				"the task to succeed on its second attempt")
			tried := done.Tasks[0].Attempts
			if len(tried) != 2 || !strings.Contains(tried[0].Reason, "XID") {
				t.Fatalf("attempts %+v: want the first ended naming the XID", tried)
			}
			if want := map[bool]string{true: api.AttemptLost, false: api.TaskFailed}[c.outOfService]; tried[0].State != want ||
				(c.outOfService && !strings.Contains(tried[0].Reason, first)) {
				t.Fatalf("first attempt %s %q, want %s (naming the GPU for a GPU's fault)", tried[0].State, tried[0].Reason, want)
			}
			if c.outOfService && slices.Contains(tried[1].Devices, first) {
				t.Fatalf("the second attempt got the faulty GPU %s", first)
			}

			w, err := admin.Worker(t.Context(), "faulty")
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(w.Devices, func(d api.Device) bool { return d.UUID == first })
			d := w.Devices[i]
			switch {
			case c.outOfService && (d.Healthy || d.Health != api.HealthUnhealthy || !strings.Contains(d.HealthReason, "XID 48")):
				t.Fatalf("the faulty GPU is reported %+v, want unhealthy naming XID 48", d)
			case !c.outOfService && (!d.Healthy || d.Health != api.HealthHealthy):
				t.Fatalf("an application XID took the GPU out: %+v", d)
			}
			// The coordinator audits the GPU's change of health, and only
			// the one that changed.
			audit, err := admin.Audit(t.Context(), client.AuditQuery{Kinds: []string{"gpu.health"}})
			if err != nil {
				t.Fatal(err)
			}
			var changed []string
			for _, ev := range audit.Events {
				if ev.WorkerID == "faulty" && strings.Contains(ev.Detail, "-> unhealthy") {
					changed = append(changed, ev.Subject)
				}
			}
			if want := map[bool]int{true: 1, false: 0}[c.outOfService]; len(changed) != want || (want == 1 && changed[0] != first) {
				t.Fatalf("audited unhealthy GPUs %v, want %d (%s)", changed, want, first)
			}
			if c.outOfService {
				// An admin clears the GPU: the agent hears it in a
				// heartbeat answer, puts the GPU through its hold-down
				// window (recovering), and the request is settled.
				if _, err := admin.ClearGPU(t.Context(), "faulty", first); err != nil {
					t.Fatal(err)
				}
				coordinatortest.WaitFor(t, 30*time.Second, "the cleared GPU to be reported recovering", func() bool {
					w, err := admin.Worker(t.Context(), "faulty")
					if err != nil || len(w.ClearGPUs) > 0 {
						return false
					}
					i := slices.IndexFunc(w.Devices, func(d api.Device) bool { return d.UUID == first })
					return w.Devices[i].Health == api.HealthRecovering && !w.Devices[i].Healthy
				})
			}
			saved, err := health.Load(ra.dataDir)
			if err != nil {
				t.Fatal(err)
			}
			j := slices.IndexFunc(saved, func(s health.Status) bool { return s.UUID == first })
			if c.outOfService && (j < 0 || saved[j].State != health.Recovering) {
				t.Fatalf("the fault and its clearing were not saved for the next start: %+v", saved)
			}
		})
	}
}

// startStoppedOnceJob submits a one-GPU job with maxAttempts whose task
// runs until it is stopped the first time and ends at once on its second
// attempt (a marker in a directory every task uid may write says which),
// and waits until the first attempt's process runs. It returns the job
// as submitted and as it runs.
func startStoppedOnceJob(t *testing.T, admin *client.Client, maxAttempts int) (submitted, running api.Job) {
	t.Helper()
	shared := dirForTasks(t, "gpulayer-stoppedonce-", 0o777)
	cfg, err := json.Marshal(map[string]any{"command": "sh", "args": []string{"-c", `[ -e "$1/ran" ] && exit 0; touch "$1/ran"; sleep 60`, "sh", shared}})
	if err != nil {
		t.Fatal(err)
	}
	submitted, err = admin.SubmitJob(t.Context(), api.JobSpec{Executor: "exec", MaxAttempts: maxAttempts, Config: cfg, Resources: &api.Resources{GPUs: 1}})
	if err != nil {
		t.Fatal(err)
	}
	running = waitJob(t, admin, submitted.ID, func(j api.Job) bool { return j.Tasks[0].State == api.TaskRunning }, "the task to start")
	coordinatortest.WaitFor(t, 30*time.Second, "the task's process to run", func() bool {
		_, err := os.Stat(filepath.Join(shared, "ran"))
		return err == nil
	})
	return submitted, running
}
