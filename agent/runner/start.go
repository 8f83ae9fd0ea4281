package runner

import (
	"context"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// startPatience bounds how long a start whose outcome is unknown is sent
// again before the attempt is given up (it then lapses and is retried).
const startPatience = 30 * time.Second

// start tells the coordinator the attempt has started, with how its
// preflight went where one ran (pre). A start whose
// answer was lost, that no coordinator could serve, or whose credential
// was refused is sent again as a new call: starting an attempt that runs
// already changes nothing, and one that lapsed meanwhile is refused as
// stale. Any other refusal is returned at once.
func (r *Runner) start(ctx context.Context, a api.Assignment, pre *api.PreflightReport) error {
	deadline := r.cfg.Clock.Now().Add(startPatience)
	backoff := 100 * time.Millisecond
	for {
		err := r.cfg.Coordinator.StartWith(ctx, a.ID, api.StartRequest{AttemptID: a.AttemptID, Preflight: pre})
		if err == nil || !worthRetrying(err) || ctx.Err() != nil || r.cfg.Clock.Now().After(deadline) {
			return err
		}
		r.cfg.Logger.Warn("start not confirmed; sending it again", "task_id", a.ID, "attempt_id", a.AttemptID, "error", err)
		select {
		case <-r.cfg.Clock.After(backoff):
		case <-ctx.Done():
			return ctx.Err()
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

// worthRetrying reports an error after which a start may yet succeed: no
// coordinator could serve it or its answer was lost (client.Unavailable),
// or its credential was refused, which the agent replaces within a
// heartbeat when it was reissued (the task was assigned to the old one,
// on a long poll that began before the reissue).
func worthRetrying(err error) bool {
	return client.Unavailable(err) || client.IsCode(err, api.CodeUnauthenticated)
}
