package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// sandboxProbe is where the image holds the probe (sandboxprobe/).
const sandboxProbe = "/sandboxprobe"

// checkSandbox runs the sandbox probe with the exec executor on each
// agent: the task succeeds only if it ran in the task sandbox (its own
// PID namespace, a /tmp of its own, the agent's data dir hidden).
// It runs after the fault scenario, so that its jobs are not among those
// the scenario counts.
func (s *scenario) checkSandbox(ctx context.Context) error {
	cfg, _ := json.Marshal(map[string]any{"command": sandboxProbe})
	var ids []string
	for _, w := range strings.Split(s.cfg.workers, ",") {
		j, err := s.client.SubmitJob(ctx, api.JobSpec{
			Name: "sandbox-probe-" + w, Executor: "exec", Config: cfg, TimeoutSeconds: 60, MaxAttempts: 1,
			Target:         &api.Target{Kind: api.TargetWorker, ID: w},
			IdempotencyKey: fmt.Sprintf("%s-sandbox-%s", s.cfg.runID, w),
		})
		if err != nil {
			return fmt.Errorf("submit the sandbox probe for %s: %w", w, err)
		}
		ids = append(ids, j.ID)
	}
	if err := s.waitTerminal(ctx, ids); err != nil {
		return err
	}
	for _, id := range ids {
		j, err := s.client.Job(ctx, id)
		if err != nil {
			return err
		}
		var saw strings.Builder
		_ = s.client.Logs(ctx, id, false, func(e api.LogEntry) error {
			saw.WriteString(e.Data)
			return nil
		})
		for _, t := range j.Tasks {
			if t.State != api.TaskSucceeded {
				return fmt.Errorf("sandbox probe %s on %s: task %s %s (%s): the exec executor's task did not run in its sandbox; it saw: %s", j.Name, t.WorkerID, t.ID, t.State, t.Reason, strings.TrimSpace(saw.String()))
			}
		}
		s.logf("%s: the task ran sandboxed: %s", j.Name, strings.TrimSpace(saw.String()))
	}
	return nil
}

// sandboxTimeout bounds checkSandbox.
const sandboxTimeout = 2 * time.Minute
