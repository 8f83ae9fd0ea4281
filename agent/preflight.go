package agent

import (
	"context"

	"github.com/gpulayer/gpulayer/agent/devices/health"
	"github.com/gpulayer/gpulayer/agent/devices/nvml"
	"github.com/gpulayer/gpulayer/agent/runner"
)

// Preflight: the runner checks a gang rank's GPUs before it starts
// (runner/preflight.go) through the device source (nvml.Source's
// Preflight). A GPU that fails a check is also handed to the health
// tracker (health.PreflightFailed), so the agent reports it unhealthy,
// with the figures, until an admin clears it: the coordinators' own mark
// of the fault does not outlive the agent's next report otherwise.

// preflighter checks GPUs before a gang's rank starts.
type preflighter interface {
	Preflight(ctx context.Context, uuids []string) []nvml.PreflightCheck
}

// preflight is the runner's preflight over the device source, or nil when
// the source has none (the runner then tells the task so).
func (a *Agent) preflight() runner.Preflight {
	p, ok := a.cfg.Devices.(preflighter)
	if !ok {
		return nil
	}
	return func(ctx context.Context, gpus []string) []runner.PreflightCheck {
		checks := p.Preflight(ctx, gpus)
		out := make([]runner.PreflightCheck, len(checks))
		for i, c := range checks {
			out[i] = runner.PreflightCheck(c)
			if c.Status == nvml.PreflightFail {
				a.preflightFailed(c)
			}
		}
		return out
	}
}

// preflightFailed marks a GPU that failed a check unhealthy in the
// health tracker; a MIG device's fault is its GPU's.
func (a *Agent) preflightFailed(c nvml.PreflightCheck) {
	a.mu.Lock()
	h := a.health
	gpu := c.GPU
	for _, d := range a.devices {
		if d.UUID == c.GPU && d.Parent != "" {
			gpu = d.Parent
		}
	}
	a.mu.Unlock()
	if h == nil {
		return
	}
	select {
	case h.obs <- health.Observation{UUID: gpu, Kind: health.PreflightFailed, Detail: c.Name + ": " + c.Detail}:
	default:
		a.log.Warn("GPU failed its preflight, but the health loop is full; the coordinators mark it for this attempt only", "uuid", gpu, "check", c.Name)
	}
}
