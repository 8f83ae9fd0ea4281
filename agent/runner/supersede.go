package runner

import (
	"context"
	"errors"
	"log/slog"
	"slices"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// supersededBy marks and returns the runs a new assignment supersedes:
// every other attempt of its task, and every attempt holding one of its
// GPUs (unless both only share it: share.go). The coordinator only hands out a task again, or a GPU to another
// attempt, once it counts the earlier attempt as lost; whatever of that
// attempt still runs here is stale. r.mu must be held.
func (r *Runner) supersededBy(a api.Assignment) []*run {
	var older []*run
	for _, rn := range r.running {
		if rn.a.ID == a.ID || holdsApart(rn.a, a) {
			rn.superseded.Store(true)
			older = append(older, rn)
		}
	}
	return older
}

// awaitSuperseded stops the runs rn supersedes and waits until each is
// over: its process gone, its task user and directory released. It
// returns early, with ctx's error or errStoppedWaiting, when the agent
// stops or rn is itself cancelled or superseded meanwhile; rn has started
// nothing then, so nothing of it needs waiting for.
func (r *Runner) awaitSuperseded(ctx context.Context, rn *run, older []*run, log *slog.Logger) error {
	for _, o := range older {
		log.Warn("stopping a stale attempt before starting its successor",
			"stale_task_id", o.a.ID, "stale_attempt_id", o.a.AttemptID, "stale_devices", o.a.Devices)
		o.stop()
	}
	for _, o := range older {
		select {
		case <-o.done:
		case <-rn.cancel:
			return errStoppedWaiting
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// errStoppedWaiting: an attempt was cancelled or superseded while it
// waited for the attempts it superseded.
var errStoppedWaiting = errors.New("stopped before it started")

func sharesDevice(a, b []string) bool {
	for _, d := range a {
		if slices.Contains(b, d) {
			return true
		}
	}
	return false
}
