package runner

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/internal/clock"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// How a preflight went goes with the attempt's start when it passed (or
// the agent has no checks), and with the fail that ends the attempt when
// a GPU failed: the outcome, the time the checks took against their
// bound, the checks and the skipped, and the failing check. A failed
// preflight is reported before the attempt ever starts, and the task
// never runs.
func TestPreflightReportGoesWithTheStartOrTheFail(t *testing.T) {
	pass := func(gpu, name, status string) PreflightCheck {
		return PreflightCheck{GPU: gpu, Name: name, Status: status, Detail: "figures"}
	}
	for _, tc := range []struct {
		name      string
		checks    []PreflightCheck
		noChecks  bool
		wantStart *api.PreflightReport
		wantFail  *api.PreflightReport
	}{
		{name: "passed", checks: []PreflightCheck{pass("G", "memory", PreflightPass), pass("G", "matmul", PreflightSkipped), pass("G", "ecc", PreflightPass)},
			wantStart: &api.PreflightReport{Outcome: api.PreflightPassed, DurationMS: 1500, BoundMS: 120000, Checks: 3, Skipped: 1}},
		{name: "failed", checks: []PreflightCheck{pass("G", "memory", PreflightPass), {GPU: "G", Name: "matmul", Status: PreflightFail, Detail: "100.0 TFLOP/s, 20 %"}},
			wantFail: &api.PreflightReport{Outcome: api.PreflightFailed, DurationMS: 1500, BoundMS: 120000, Checks: 2, Failed: "GPU G: matmul: 100.0 TFLOP/s, 20 %"}},
		{name: "no checks here", noChecks: true, wantStart: &api.PreflightReport{Outcome: api.PreflightSkipped}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, rec, _ := newRunner(t, SharedUser{})
			fake := clock.NewFake(time.Unix(1_000_000, 0))
			r.cfg.Clock = fake
			if !tc.noChecks {
				r.cfg.Preflight = func(_ context.Context, gpus []string) []PreflightCheck {
					fake.Advance(1500 * time.Millisecond)
					return tc.checks
				}
			}
			a := shellTask(t, "echo the task ran", nil)
			a.Preflight = true
			out := r.Run(t.Context(), a)
			stdout, _, _ := rec.out(a.ID)
			ran := strings.Contains(stdout, "the task ran")
			rec.mu.Lock()
			started, atStart, atFail := rec.started[a.ID], rec.startPreflight[a.ID], rec.failPreflight[a.ID]
			rec.mu.Unlock()
			if tc.wantStart != nil {
				if !started || atStart == nil || *atStart != *tc.wantStart || !ran || out.Failed {
					t.Fatalf("started %v with %+v (ran: %v, %+v), want %+v", started, atStart, ran, out, tc.wantStart)
				}
				return
			}
			if started || ran || out.End != EndGPUFault {
				t.Fatalf("a failed preflight started the attempt (%v) or ran the task (%v): %+v", started, ran, out)
			}
			if atFail == nil || *atFail != *tc.wantFail {
				t.Fatalf("the fail carried %+v, want %+v", atFail, tc.wantFail)
			}
		})
	}
}
