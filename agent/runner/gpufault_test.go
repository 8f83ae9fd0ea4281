package runner

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/plugins/exec"
)

// A GPU that fails stops the attempts holding it, which report fail with
// the fault (so the task is retried on sound GPUs), and only those.
func TestFailGPUStopsOnlyTheAttemptsOnIt(t *testing.T) {
	rec := newRecorder()
	r := New(Config{Host: inProcess{exec.New(exec.Options{})}, Coordinator: rec, WorkRoot: searchableRoot(t), StopGrace: time.Second})
	dir := t.TempDir()
	// Each task says it runs, then waits.
	script := `touch "$1"; sleep 60`
	hit := shellTask(t, script, nil, filepath.Join(dir, "hit"))
	spared := shellTask(t, script, nil, filepath.Join(dir, "spared"))
	results := map[string]chan Outcome{hit.AttemptID: make(chan Outcome, 1), spared.AttemptID: make(chan Outcome, 1)}
	go func() { results[hit.AttemptID] <- r.Run(t.Context(), hit) }()
	go func() { results[spared.AttemptID] <- r.Run(t.Context(), spared) }()
	deadline := time.Now().Add(30 * time.Second)
	for _, f := range []string{"hit", "spared"} {
		for {
			if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("task %s never ran", f)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

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
	if _, _, ended := rec.out(hit.ID); ended != "fail "+reason {
		t.Fatalf("reported %q, want the fault", ended)
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
