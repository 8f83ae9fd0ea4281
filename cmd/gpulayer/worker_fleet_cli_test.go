package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// The fleet as an admin sees it from the CLI: `worker list` counts each
// worker's healthy, unhealthy and awaiting GPUs (a revoked worker's are
// not healthy), `gpu list` names the task on each GPU, and `worker
// forget` removes a revoked worker but refuses a live one; `gpu drain`
// cordons a GPU and frees it of its task.
func TestWorkerFleetCommands(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin, join := h.Client(t, h.AdminToken), h.Client(t, h.JoinToken)
	gpu := func(uuid string, healthy bool) api.Device {
		d := api.Device{UUID: uuid, Name: "H100", MemoryMiB: 81559, Healthy: healthy, Health: api.HealthHealthy}
		if !healthy {
			d.Health, d.HealthReason = api.HealthUnhealthy, "xid 79"
		}
		return d
	}
	a, err := join.Register(ctx, api.RegisterRequest{WorkerID: "node-a", Capabilities: []string{"*"}, Executors: []string{"exec"},
		Devices: []api.Device{gpu("GPU-a0", true), gpu("GPU-a1", true), gpu("GPU-a2", false)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := join.Register(ctx, api.RegisterRequest{WorkerID: "node-b", Capabilities: []string{"*"}, Executors: []string{"exec"},
		Devices: []api.Device{gpu("GPU-b0", true)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RevokeWorker(ctx, "node-b"); err != nil {
		t.Fatal(err)
	}
	job, err := admin.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"sleep 60"}`), Resources: &api.Resources{GPUs: 1}})
	if err != nil {
		t.Fatal(err)
	}
	acq, err := h.Client(t, a.WorkerToken).Acquire(ctx, api.AcquireRequest{WaitSeconds: 5})
	if err != nil || acq.Task == nil || len(acq.Task.Devices) != 1 {
		t.Fatalf("acquire: %+v %v", acq, err)
	}
	env := []string{"GPULAYER_ADDR=" + h.URL, "GPULAYER_TOKEN=" + h.AdminToken}
	ok := func(args ...string) string {
		t.Helper()
		r := run(t, env, args...)
		if r.code != 0 {
			t.Fatalf("gpulayer %s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
		return r.stdout
	}

	list := ok("worker", "list")
	for worker, want := range map[string][]string{"node-a": {"ready", "3", "2", "1", "0"}, "node-b": {"revoked", "1", "0", "1", "0"}} {
		if got := fieldsOf(list, worker); len(got) < 6 || strings.Join(got[1:6], " ") != strings.Join(want, " ") {
			t.Fatalf("worker list row of %s: %v, want STATUS GPUS HEALTHY UNHEALTHY AWAITING %v\n%s", worker, got, want, list)
		}
	}

	gpus := ok("gpu", "list")
	held := fieldsOf(gpus, "node-a", acq.Task.Devices[0])
	if len(held) < 7 || held[6] != job.ID+"/"+acq.Task.ID {
		t.Fatalf("gpu list row of the held GPU: %v\n%s", held, gpus)
	}
	if b := fieldsOf(gpus, "node-b", "GPU-b0"); len(b) < 7 || b[5] != api.HealthUnknown || b[6] != "free" {
		t.Fatalf("gpu list row of the revoked worker's GPU: %v\n%s", b, gpus)
	}
	if !strings.Contains(gpus, "4 GPUs: 2 healthy, 2 unhealthy, 0 awaiting approval; 1 in use") {
		t.Fatalf("gpu list summary:\n%s", gpus)
	}
	if only := ok("gpu", "list", "--worker", "node-b"); strings.Contains(only, "node-a") {
		t.Fatalf("gpu list --worker node-b:\n%s", only)
	}

	// gpu drain: the GPU is cordoned and the task assigned on it requeued.
	if out := ok("gpu", "drain", "node-a", acq.Task.Devices[0], "--reason", "reset"); !strings.Contains(out, "node-a: GPU "+acq.Task.Devices[0]+" drained") {
		t.Fatalf("gpu drain printed %q", out)
	}
	if row := fieldsOf(ok("gpu", "list"), "node-a", acq.Task.Devices[0]); len(row) < 7 || row[6] != "free" {
		t.Fatalf("gpu list row of the drained GPU: %v", row)
	}
	if w, err := admin.Worker(ctx, "node-a"); err != nil || !slices.ContainsFunc(w.Devices, func(d api.Device) bool {
		return d.UUID == acq.Task.Devices[0] && d.Cordoned && d.CordonReason == "reset"
	}) {
		t.Fatalf("the drained GPU is not cordoned: %+v %v", w.Devices, err)
	}
	if r := run(t, env, "gpu", "drain", "node-a", "GPU-nope"); r.code == 0 || !strings.Contains(r.stderr, "not_found") {
		t.Fatalf("gpu drain of an unknown GPU: exit %d %s", r.code, r.stderr)
	}

	if r := run(t, env, "worker", "forget", "node-a"); r.code == 0 || !strings.Contains(r.stderr, "conflict") {
		t.Fatalf("forget a live worker: exit %d %s", r.code, r.stderr)
	}
	if out := ok("worker", "forget", "node-b"); !strings.Contains(out, "node-b forgotten") {
		t.Fatalf("forget printed %q", out)
	}
	if list := ok("worker", "list"); strings.Contains(list, "node-b") || !strings.Contains(list, "node-a") {
		t.Fatalf("worker list after forget:\n%s", list)
	}
}

// fieldsOf splits on blanks the first line of a table whose first field
// is first and that holds every field of also (nil when none does).
func fieldsOf(table, first string, also ...string) []string {
	for line := range strings.Lines(table) {
		f := strings.Fields(line)
		if len(f) > 0 && f[0] == first && !slices.ContainsFunc(also, func(a string) bool { return !slices.Contains(f, a) }) {
			return f
		}
	}
	return nil
}
