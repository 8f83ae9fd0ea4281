package runner

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/plugins/exec"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// holdScript records its pid in $1, says so, and sleeps until stopped.
const holdScript = `echo $$ > "$1"; echo up; exec sleep 120`

// checkScript says whether the process whose pid is in $1 still exists.
const checkScript = `if kill -0 "$(cat "$1")" 2>/dev/null; then echo overlap; else echo alone; fi`

// A new assignment that takes over an attempt still running here (the same
// task, or a task given one of its GPUs) stops that attempt and starts
// only once its process is gone; the stale attempt reports nothing.
func TestNewAssignmentWaitsForTheAttemptItSupersedes(t *testing.T) {
	cases := []struct {
		name      string
		successor func(old api.Assignment, script []byte) api.Assignment
	}{
		{"next attempt of the same task", func(old api.Assignment, script []byte) api.Assignment {
			a := old
			a.AttemptID, a.Config = old.AttemptID+"-next", script
			return a
		}},
		{"another task given its GPU", func(old api.Assignment, script []byte) api.Assignment {
			return api.Assignment{ID: old.ID + "-other", JobID: "job-2", AttemptID: old.AttemptID + "-other", Executor: "exec",
				Config: script, Devices: []string{"GPU-z", old.Devices[0]}}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, rec, _ := newRunner(t, nil)
			pidFile := filepath.Join(t.TempDir(), "pid")
			old := shellTask(t, holdScript, nil, pidFile)
			oldDone := make(chan Outcome, 1)
			go func() { oldDone <- r.Run(t.Context(), old) }()
			waitOutput(t, rec, old.ID, "up")

			cfg, err := json.Marshal(exec.Config{Command: "sh", Args: []string{"-c", checkScript, "sh", pidFile}})
			if err != nil {
				t.Fatal(err)
			}
			next := c.successor(old, cfg)
			out := r.Run(t.Context(), next)
			stdout, _, _ := rec.out(next.ID)
			if out.ExitCode != 0 || out.Failed || !strings.Contains(stdout, "alone") {
				t.Fatalf("successor: %+v, stdout %q (it must start only once the stale attempt is gone)", out, stdout)
			}
			select {
			case o := <-oldDone:
				if !o.Failed || o.Reason != "stale attempt" {
					t.Fatalf("superseded attempt ended %+v, want a stale attempt", o)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the superseded attempt's Run did not return")
			}
			if got := rec.reported(); !slices.Equal(got, []string{next.AttemptID}) {
				t.Fatalf("attempts that reported an end: %v, want only %s", got, next.AttemptID)
			}
			if running := r.Running(); len(running) != 0 {
				t.Fatalf("still running: %+v", running)
			}
		})
	}
}

// Running lists attempts, so two attempts of one task are told apart and
// the end of one never hides the other; Cancel names the attempt.
func TestRunningAndCancelAreByAttempt(t *testing.T) {
	r, rec, _ := newRunner(t, nil)
	pidFile := filepath.Join(t.TempDir(), "pid")
	a := shellTask(t, holdScript, nil, pidFile)
	done := make(chan Outcome, 1)
	go func() { done <- r.Run(t.Context(), a) }()
	waitOutput(t, rec, a.ID, "up")
	if got := r.Running(); !slices.Equal(got, []Attempt{{TaskID: a.ID, AttemptID: a.AttemptID}}) {
		t.Fatalf("Running = %+v", got)
	}
	if r.Cancel(a.ID) {
		t.Fatal("Cancel took a task id for an attempt id")
	}
	if !r.Cancel(a.AttemptID) {
		t.Fatal("Cancel did not find the running attempt")
	}
	select {
	case o := <-done:
		if o.Failed {
			t.Fatalf("a cancelled attempt is reported with its exit: %+v", o)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the cancelled attempt did not end")
	}
	if got := rec.reported(); !slices.Equal(got, []string{a.AttemptID}) {
		t.Fatalf("reports: %v", got)
	}
}

// waitOutput polls the recorded stdout of task id until it holds want.
func waitOutput(t *testing.T, rec *recorder, id, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if stdout, _, _ := rec.out(id); strings.Contains(stdout, want) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("task %s never wrote %q", id, want)
		case <-tick.C:
		}
	}
}
