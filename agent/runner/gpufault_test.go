package runner

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/plugins/exec"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// A GPU that fails stops the attempts holding it, which report fail with
// the fault and the GPU it names (so the attempt is lost, not counted,
// and the task retried on sound GPUs at once), and only those.
func TestFailGPUStopsOnlyTheAttemptsOnIt(t *testing.T) {
	rec := newRecorder()
	r := New(Config{Host: inProcess{exec.New(exec.Options{})}, Coordinator: rec, WorkRoot: searchableRoot(t), StopGrace: time.Second})
	// Each task says it runs, then waits.
	script := `echo up; exec sleep 60`
	hit := shellTask(t, script, nil)
	spared := shellTask(t, script, nil)
	results := map[string]chan Outcome{hit.AttemptID: make(chan Outcome, 1), spared.AttemptID: make(chan Outcome, 1)}
	go func() { results[hit.AttemptID] <- r.Run(t.Context(), hit) }()
	go func() { results[spared.AttemptID] <- r.Run(t.Context(), spared) }()
	waitOutput(t, rec, hit.ID, "up")
	waitOutput(t, rec, spared.ID, "up")

	const reason = "GPU GPU-x is unhealthy: XID 48 (the GPU needs a reset)"
	if got := r.FailGPU(hit.Devices[0], reason); !slices.Equal(got, []string{hit.AttemptID}) {
		t.Fatalf("FailGPU stopped %v, want only %s", got, hit.AttemptID)
	}
	select {
	case out := <-results[hit.AttemptID]:
		if !out.Failed || out.Reason != reason {
			t.Fatalf("the attempt on the failed GPU ended %+v, want failed with the fault", out)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the attempt on the failed GPU did not stop")
	}
	if _, _, ended := rec.out(hit.ID); ended != "fail "+reason+" [gpu_fault "+hit.Devices[0]+"]" {
		t.Fatalf("reported %q, want the fault naming the GPU", ended)
	}
	select {
	case out := <-results[spared.AttemptID]:
		t.Fatalf("the attempt on another GPU ended: %+v", out)
	default:
	}
	if !r.Cancel(spared.AttemptID) {
		t.Fatal("the spared attempt was not running")
	}
	if out := <-results[spared.AttemptID]; strings.Contains(out.Reason, "XID") {
		t.Fatalf("the spared attempt ended with the fault: %+v", out)
	}
}

// An application fault stops the task holding its device whole and none
// of the tasks sharing one: the event does not say which of them faulted.
func TestFailAppSparesSharedTasks(t *testing.T) {
	rec := newRecorder()
	r := New(Config{Host: inProcess{exec.New(exec.Options{})}, Coordinator: rec, WorkRoot: searchableRoot(t), StopGrace: time.Second})
	script := `echo running; exec sleep 120`
	whole := shellTask(t, script, nil)
	a := shared(shellTask(t, script, nil), "GPU-s", 1024, api.SharingUnenforced)
	b := shared(shellTask(t, script, nil), "GPU-s", 2048, api.SharingUnenforced)
	done := map[string]chan Outcome{}
	for _, x := range []api.Assignment{whole, a, b} {
		ch := make(chan Outcome, 1)
		done[x.AttemptID] = ch
		go func() { ch <- r.Run(t.Context(), x) }()
	}
	for _, x := range []api.Assignment{whole, a, b} {
		waitOutput(t, rec, x.ID, "running")
	}

	const reason = "GPU GPU-s reported XID 13 (an application's fault)"
	stopped, spared := r.FailApp("GPU-s", reason)
	if len(stopped) != 0 || !slices.Equal(spared, slices.Sorted(slices.Values([]string{a.AttemptID, b.AttemptID}))) {
		t.Fatalf("on the shared GPU: stopped %v, spared %v; want none stopped, both spared", stopped, spared)
	}
	stopped, spared = r.FailApp(whole.Devices[0], reason)
	if !slices.Equal(stopped, []string{whole.AttemptID}) || len(spared) != 0 {
		t.Fatalf("on the whole GPU: stopped %v, spared %v; want %s stopped", stopped, spared, whole.AttemptID)
	}
	if out := <-done[whole.AttemptID]; !out.Failed || out.End != EndGPUFault || out.Reason != reason {
		t.Fatalf("the task holding its GPU whole ended %+v, want failed with the fault", out)
	}
	// An application's fault is the task's: its report names no GPU, so
	// the attempt counts.
	if _, _, ended := rec.out(whole.ID); ended != "fail "+reason {
		t.Fatalf("reported %q, want the fault and no gpu_fault", ended)
	}
	for _, x := range []api.Assignment{a, b} {
		select {
		case out := <-done[x.AttemptID]:
			t.Fatalf("a shared task ended: %+v", out)
		default:
		}
		r.Cancel(x.AttemptID)
		if out := <-done[x.AttemptID]; out.End == EndGPUFault {
			t.Fatalf("a spared task ended with the fault: %+v", out)
		}
	}
}
