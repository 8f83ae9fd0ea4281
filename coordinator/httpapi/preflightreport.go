package httpapi

import (
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// preflightReport validates the preflight report a start or fail carries
// (nil: none) and returns it as the state keeps it. started says it came
// with a start, which a failed preflight never does (it ends the attempt
// with a fail instead).
func preflightReport(p *api.PreflightReport, started bool) (*command.Preflight, error) {
	if p == nil {
		return nil, nil
	}
	switch p.Outcome {
	case api.PreflightPassed, api.PreflightSkipped:
		if p.Failed != "" {
			return nil, invalidf("preflight.failed: only on a failed preflight")
		}
	case api.PreflightFailed:
		if started {
			return nil, invalidf("preflight.outcome: a failed preflight ends the attempt with a fail, never a start")
		}
		if p.Failed == "" {
			return nil, invalidf("preflight.failed: a failed preflight names its failing check")
		}
	default:
		return nil, invalidf("preflight.outcome: %q is not passed, failed or skipped", p.Outcome)
	}
	switch {
	case p.DurationMS < 0 || p.DurationMS > api.MaxPreflightMS:
		return nil, invalidf("preflight.duration_ms: %d, from 0 to %d", p.DurationMS, api.MaxPreflightMS)
	case p.BoundMS < 0 || p.BoundMS > api.MaxPreflightMS:
		return nil, invalidf("preflight.bound_ms: %d, from 0 to %d", p.BoundMS, api.MaxPreflightMS)
	case p.Checks < 0 || p.Checks > api.MaxPreflightChecks:
		return nil, invalidf("preflight.checks: %d, from 0 to %d", p.Checks, api.MaxPreflightChecks)
	case p.Skipped < 0 || p.Skipped > p.Checks:
		return nil, invalidf("preflight.skipped: %d, from 0 to the checks (%d)", p.Skipped, p.Checks)
	}
	if err := checkLen("preflight.failed", p.Failed, api.MaxReasonBytes); err != nil {
		return nil, err
	}
	return &command.Preflight{Outcome: p.Outcome, DurationMS: p.DurationMS, BoundMS: p.BoundMS, Checks: p.Checks, Skipped: p.Skipped, Failed: p.Failed}, nil
}
