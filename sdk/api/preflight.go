package api

// PreflightReport is how an attempt's preflight went: the agent reports
// it with the attempt's start (passed, or skipped where the agent has no
// GPU checks) or with the fail a failing check ends it with, and it is
// shown on the attempt (Attempt.Preflight). The per-check lines are in
// the task's log.
type PreflightReport struct {
	// Outcome is PreflightPassed, PreflightFailed or PreflightSkipped.
	Outcome string `json:"outcome"`
	// DurationMS is how long the checks took; BoundMS the bound they ran
	// under (0 where skipped).
	DurationMS int64 `json:"duration_ms"`
	BoundMS    int64 `json:"bound_ms,omitempty"`
	// Checks counts the checks reported, Skipped those of them skipped.
	Checks  int `json:"checks"`
	Skipped int `json:"skipped,omitempty"`
	// Failed is the first failing check ("GPU <uuid>: <check>: <detail>"),
	// on a failed preflight only; at most MaxReasonBytes.
	Failed string `json:"failed,omitempty"`
}

// Preflight outcomes.
const (
	PreflightPassed  = "passed"
	PreflightFailed  = "failed"
	PreflightSkipped = "skipped"
)

// Bounds on a PreflightReport.
const (
	// MaxPreflightMS bounds DurationMS and BoundMS (an hour).
	MaxPreflightMS = 3_600_000
	// MaxPreflightChecks bounds Checks.
	MaxPreflightChecks = 4096
)
