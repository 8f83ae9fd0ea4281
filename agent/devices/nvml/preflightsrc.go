package nvml

import (
	"context"

	"github.com/gpulayer/gpulayer/agent/devices/cuda"
)

// Compute runs the preflight checks that need the GPU to compute
// (*cuda.Lib).
type Compute interface {
	MemoryPattern(ctx context.Context, uuid string) cuda.Outcome
	Matmul(ctx context.Context, uuid, model string) cuda.Outcome
	PeerBandwidth(ctx context.Context, uuid string, peers []string) cuda.Outcome
}

// SetCompute gives the preflight its CUDA checks; call it before the
// source is used.
func (s *Source) SetCompute(c Compute) { s.compute = c }

// A preflight checks a gang rank's GPUs before the rank starts (the
// agent's runner asks for it when the job sets preflight). What NVML can
// tell is checked: the memory the GPU reports against its model's,
// uncorrected ECC errors since the driver loaded, and every NVLink the
// topology has being up. The memory pattern test, the matmul throughput
// against the model's figure and the peer-to-peer bandwidth over NVLink
// run through CUDA (SetCompute: agent/devices/cuda, loaded at run time);
// on an agent without it they are reported "skipped: no CUDA", never
// given figures.

// Preflight check outcomes.
const (
	PreflightPass    = "pass"
	PreflightFail    = "fail"
	PreflightSkipped = "skipped"
)

// PreflightCheck is one check of one GPU.
type PreflightCheck struct {
	GPU    string
	Name   string
	Status string
	Detail string
}

// preflightChecks names the checks, in the order they are reported.
var preflightChecks = []string{"memory", "ecc", "nvlink", "memory-pattern", "matmul", "p2p-bandwidth"}

// Preflight checks GPUs uuids, within ctx: a check ctx's end leaves
// undone is reported skipped, naming the bound.
func (s *Source) Preflight(ctx context.Context, uuids []string) []PreflightCheck {
	if s.preflight == nil {
		return skipAll(uuids, "no NVML on this agent")
	}
	if err := s.lockOpen(ctx); err != nil {
		return skipAll(uuids, "the GPUs could not be read: "+err.Error())
	}
	defer s.mu.Unlock()
	return s.preflight(ctx, uuids)
}

// skipAll is every check of every GPU skipped, for why.
func skipAll(uuids []string, why string) []PreflightCheck {
	var out []PreflightCheck
	for _, u := range uuids {
		for _, name := range preflightChecks {
			out = append(out, PreflightCheck{GPU: u, Name: name, Status: PreflightSkipped, Detail: why})
		}
	}
	return out
}
