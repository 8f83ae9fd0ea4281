package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/plugins/exec"
)

// gate is a Leases that holds every attempt until released.
type gate struct {
	asked   chan string   // attempt ids Hold was asked about
	release chan struct{} // closed: every lease holds
}

func newGate() *gate { return &gate{asked: make(chan string, 4), release: make(chan struct{})} }

func (g *gate) Hold(ctx context.Context, attemptID string, stop <-chan struct{}) error {
	g.asked <- attemptID
	select {
	case <-g.release:
		return nil
	case <-stop:
		return errors.New("stopped")
	case <-ctx.Done():
		return ctx.Err()
	}
}

// A task's process starts only once its lease is known to hold: while
// Leases.Hold waits (the lease may have lapsed, a renewal is on its way),
// nothing runs; a cancel meanwhile ends the attempt with nothing started.
func TestProcessStartsOnlyOnceTheLeaseHolds(t *testing.T) {
	cases := []struct {
		name    string
		release bool // else cancelled while it waits
	}{
		{"renewed", true},
		{"cancelled while waiting", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := newGate()
			rec := newRecorder()
			ran := filepath.Join(t.TempDir(), "ran")
			// Kept: a sandboxed task does not see the host's /tmp.
			r := New(Config{Host: inProcess{exec.New(exec.Options{})}, Coordinator: rec, WorkRoot: searchableRoot(t), Leases: g, StopGrace: time.Second, Sandbox: SandboxConfig{Keep: []string{filepath.Dir(ran)}}})
			a := shellTask(t, `echo ran > "$1"`, nil, ran)
			done := make(chan Outcome, 1)
			go func() { done <- r.Run(t.Context(), a) }()
			select {
			case id := <-g.asked:
				if id != a.AttemptID {
					t.Fatalf("Hold asked about %s, want %s", id, a.AttemptID)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the runner never asked whether the lease holds")
			}
			if _, err := os.Stat(ran); err == nil {
				t.Fatal("the task ran before its lease was known to hold")
			}
			if c.release {
				close(g.release)
			} else if !r.Cancel(a.AttemptID) {
				t.Fatal("Cancel did not find the waiting attempt")
			}
			var out Outcome
			select {
			case out = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("Run did not return")
			}
			_, err := os.Stat(ran)
			_, _, ended := rec.out(a.ID)
			switch {
			case c.release && (err != nil || out.Failed || out.ExitCode != 0 || ended != "finish 0"):
				t.Fatalf("after the renewal: outcome %+v, reported %q, ran: %v", out, ended, err == nil)
			case !c.release && (err == nil || !out.Failed || !strings.HasPrefix(ended, "fail cancelled before it started")):
				t.Fatalf("cancelled while waiting: outcome %+v, reported %q, ran: %v", out, ended, err == nil)
			}
		})
	}
}
