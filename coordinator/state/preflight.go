package state

import "github.com/gpulayer/gpulayer/coordinator/command"

// An attempt's preflight. A gang rank's agent checks its GPUs before the
// rank starts (agent/runner/preflight.go) and reports how that went with
// the attempt's start (passed, or skipped) or with the fail a failing
// check ends it with: the outcome, the time the checks took against
// their bound, how many ran and were skipped, and the first failing
// check. It is kept on the attempt as reported (the route bounds and
// validates it) and shown with it; it decides nothing here, the fail's
// GPU fault does (gpufault.go).

// clonePreflight copies p, so that the attempt shares nothing with the
// command it came in.
func clonePreflight(p *command.Preflight) *command.Preflight {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

// keepPreflight records p on t's attempt attemptID, the one just ended,
// where the agent reported one. t is owned.
func keepPreflight(t *Task, attemptID string, p *command.Preflight) {
	if p == nil {
		return
	}
	if a := t.OwnCurrent(); a != nil && a.ID == attemptID {
		a.Preflight = clonePreflight(p)
	}
}
