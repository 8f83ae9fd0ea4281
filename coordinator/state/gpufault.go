package state

import (
	"fmt"
	"slices"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/gpuops"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// A GPU failing under a running task. The agent stops the attempt when a
// GPU it holds turns unhealthy (an XID of a class that takes the GPU out,
// the GPU falling off the bus) and reports it failed naming that GPU
// (FailTask.GPUFault). The attempt ends lost, not failed: the task did
// nothing wrong, so it uses up no attempt, and it is placed again at once
// rather than after its lease. The GPU is marked unhealthy in the
// worker's record at the same time, unless the agent's own report said so
// first, so the retry cannot land on it either way. A gang ends whole, as for any
// member's end (settleGang).
//
// An agent could claim faults forever to keep a task from ever failing:
// only the first maxGPUFaultRetries such attempts of a task are free;
// later ones count (Task.AttemptsUsed).
const maxGPUFaultRetries = record.MaxGPUFaultRetries

// gpuFault ends t's attempt lost to the fault of GPU c.GPUFault, which
// the attempt must hold.
func (s *Store) gpuFault(t *Task, c command.FailTask, reason string) error {
	if !slices.Contains(t.Devices, c.GPUFault) {
		return fmt.Errorf("gpu_fault %s is not a GPU of attempt %s (it holds %v): %w", c.GPUFault, c.AttemptID, t.Devices, ErrInvalid)
	}
	why := fmt.Sprintf("GPU %s failed under the task: %s", c.GPUFault, reason)
	if w, ok := s.workers[t.WorkerID]; ok {
		gpuops.MarkFailed(roomEffects{s}, w, c.GPUFault, why, c.Now)
	}
	s.endAttempt(t, attemptLost, nil, why, c.Now)
	t.OwnCurrent().GPUFault = c.GPUFault
	s.requeueOrEnd(t, why, c.Now)
	s.markPending()
	return nil
}
