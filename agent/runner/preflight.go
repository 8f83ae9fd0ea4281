package runner

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// Preflight. A task whose job asks for it (a gang job's preflight) has
// its GPUs checked before its start is reported, and so before its gang
// meets, so that a rank on a bad GPU never holds the others up in a run
// that would fail. Every check's outcome, and the time the whole took
// against its bound, go into the task's log as agent lines; the outcome,
// the time, the bound and the counts go with the start, or with the fail
// (api.PreflightReport), and are shown on the attempt. A GPU that fails
// a check ends the attempt as a GPU fault naming it, with the figures:
// the coordinators mark the GPU unhealthy, end the attempt lost without
// using one up, and place the gang again.

// DefaultPreflightBound bounds a preflight's checks.
const DefaultPreflightBound = 2 * time.Minute

// Preflight check outcomes.
const (
	PreflightPass    = "pass"
	PreflightFail    = "fail"
	PreflightSkipped = "skipped"
)

// PreflightCheck is one check of one GPU.
type PreflightCheck struct {
	GPU, Name, Status, Detail string
}

// Preflight checks gpus within ctx.
type Preflight func(ctx context.Context, gpus []string) []PreflightCheck

// preflight runs a's preflight and reports it in its log; failed says the
// attempt ended, out how. report is what the start or the fail carries
// (api.PreflightReport).
func (r *Runner) preflight(ctx context.Context, a api.Assignment, ship *shipper, log *slog.Logger) (report *api.PreflightReport, out Outcome, failed bool) {
	if r.cfg.Preflight == nil {
		ship.note("preflight: skipped: this agent has no GPU checks")
		return &api.PreflightReport{Outcome: api.PreflightSkipped}, Outcome{}, false
	}
	bound := cmp.Or(r.cfg.PreflightBound, DefaultPreflightBound)
	began := r.cfg.Clock.Now()
	pctx, cancel := context.WithTimeout(ctx, bound)
	checks := r.cfg.Preflight(pctx, a.Devices)
	cancel()
	took := r.cfg.Clock.Now().Sub(began).Round(time.Millisecond)
	var bad *PreflightCheck
	skipped := 0
	for i, c := range checks {
		ship.note(fmt.Sprintf("preflight: GPU %s: %s: %s: %s", c.GPU, c.Name, c.Status, c.Detail))
		switch c.Status {
		case PreflightFail:
			if bad == nil {
				bad = &checks[i]
			}
		case PreflightSkipped:
			skipped++
		}
	}
	report = &api.PreflightReport{Outcome: api.PreflightPassed, DurationMS: took.Milliseconds(), BoundMS: bound.Milliseconds(), Checks: len(checks), Skipped: skipped}
	if bad == nil {
		ship.note(fmt.Sprintf("preflight: passed in %s (bound %s): %d checks on %d GPUs, %d skipped", took, bound, len(checks), len(a.Devices), skipped))
		log.Info("preflight passed", "took", took, "checks", len(checks), "skipped", skipped)
		return report, Outcome{}, false
	}
	report.Outcome = api.PreflightFailed
	report.Failed = cut(fmt.Sprintf("GPU %s: %s: %s", bad.GPU, bad.Name, bad.Detail))
	reason := cut(fmt.Sprintf("preflight: GPU %s failed its %s check: %s (took %s of %s)", bad.GPU, bad.Name, bad.Detail, took, bound))
	ship.note(reason)
	log.Warn("preflight failed; the gang is placed again", "gpu", bad.GPU, "check", bad.Name, "detail", bad.Detail)
	return report, r.report(context.WithoutCancel(ctx), a, EndGPUFault, api.FailRequest{AttemptID: a.AttemptID, Reason: reason, GPUFault: bad.GPU, Preflight: report}), true
}

// cut bounds a reason or a failed check to api.MaxReasonBytes.
func cut(s string) string {
	if len(s) > api.MaxReasonBytes {
		return s[:api.MaxReasonBytes]
	}
	return s
}
