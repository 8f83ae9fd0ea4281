package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/plugins/exec"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// startAnswers is a coordinator whose start calls answer errs in turn,
// then nil.
type startAnswers struct {
	*recorder
	errs  []error
	calls atomic.Int32
}

func (s *startAnswers) StartWith(context.Context, string, api.StartRequest) error {
	n := int(s.calls.Add(1))
	if n <= len(s.errs) {
		return s.errs[n-1]
	}
	return nil
}

// A start whose answer was lost is sent again, and the task runs once it
// is confirmed; a definite refusal is not sent again, and nothing runs.
func TestStartWithAnUnknownOutcomeIsSentAgain(t *testing.T) {
	lost := fmt.Errorf("client: POST /v1/tasks/t/start: %w (EOF)", client.ErrOutcomeUnknown)
	stale := &api.Error{Code: api.CodeStaleAttempt, Message: "attempt lapsed"}
	noLeader := &api.Error{Code: api.CodeNoLeader, Message: "no leader"}
	cases := []struct {
		name      string
		errs      []error
		wantRun   bool
		wantCalls int32
	}{
		{"answer lost, then confirmed", []error{lost, noLeader}, true, 3},
		{"answer lost, then stale", []error{lost, stale}, false, 2},
		{"stale at once", []error{stale}, false, 1},
		{"credential refused, then replaced", []error{&api.Error{Code: api.CodeUnauthenticated, Message: "reissued"}}, true, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			coord := &startAnswers{recorder: newRecorder(), errs: c.errs}
			ran := filepath.Join(t.TempDir(), "ran")
			// The marker lies in the host's /tmp, which a sandboxed task
			// would not see otherwise.
			r := New(Config{Host: inProcess{exec.New(exec.Options{})}, Coordinator: coord, WorkRoot: searchableRoot(t), StopGrace: time.Second, Sandbox: SandboxConfig{Keep: []string{filepath.Dir(ran)}}})
			out := r.Run(t.Context(), shellTask(t, `echo ran > "$1"`, nil, ran))
			_, err := os.Stat(ran)
			if (err == nil) != c.wantRun || coord.calls.Load() != c.wantCalls {
				t.Fatalf("ran %v after %d start calls (outcome %+v); want ran %v after %d", err == nil, coord.calls.Load(), out, c.wantRun, c.wantCalls)
			}
		})
	}
}
