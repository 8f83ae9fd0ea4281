package runner

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/executor"
)

// noExecutor is a host whose executors are all unavailable.
type noExecutor struct{}

func (noExecutor) Get(context.Context, string) (executor.Executor, error) {
	return nil, errors.New("no such executor")
}

// Each way an attempt can end gives its End: the word metrics count it
// under.
func TestOutcomeEnd(t *testing.T) {
	cases := []struct {
		name    string
		script  string
		timeout int
		// act, when set, runs once the task wrote "up": it ends the
		// attempt from outside.
		act  func(r *Runner, a api.Assignment, cancelRun context.CancelFunc)
		host Host
		want End
	}{
		{name: "exit 0", script: "exit 0", want: EndSucceeded},
		{name: "exit 3", script: "exit 3", want: EndFailed},
		{name: "timeout", script: "echo up; exec sleep 120", timeout: 1, want: EndTimedOut},
		{name: "cancel", script: "echo up; exec sleep 120", want: EndCancelled,
			act: func(r *Runner, a api.Assignment, _ context.CancelFunc) { r.Cancel(a.AttemptID) }},
		{name: "gpu fault", script: "echo up; exec sleep 120", want: EndGPUFault,
			act: func(r *Runner, a api.Assignment, _ context.CancelFunc) { r.FailGPU(a.Devices[0], "XID 79") }},
		{name: "agent shutdown", script: "echo up; exec sleep 120", want: EndShutdown,
			act: func(_ *Runner, _ api.Assignment, cancelRun context.CancelFunc) { cancelRun() }},
		{name: "executor unavailable", script: "exit 0", host: noExecutor{}, want: EndError},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, rec, _ := newRunner(t, nil)
			if c.host != nil {
				r.cfg.Host = c.host
			}
			a := shellTask(t, c.script, nil, filepath.Join(t.TempDir(), "unused"))
			a.TimeoutSeconds = c.timeout
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			done := make(chan Outcome, 1)
			go func() { done <- r.Run(ctx, a) }()
			if c.act != nil {
				waitOutput(t, rec, a.ID, "up")
				c.act(r, a, cancel)
			}
			select {
			case out := <-done:
				if out.End != c.want {
					t.Fatalf("End = %q, want %q (outcome %+v)", out.End, c.want, out)
				}
			case <-time.After(60 * time.Second):
				t.Fatal("the attempt did not end")
			}
		})
	}
}

func TestEndsAreDistinct(t *testing.T) {
	seen := map[End]bool{}
	for _, e := range Ends() {
		if e == "" || seen[e] {
			t.Fatalf("End %q empty or listed twice in %v", e, Ends())
		}
		seen[e] = true
	}
	if len(seen) != 10 {
		t.Fatalf("Ends() lists %d ends, want 10", len(seen))
	}
}
