package state

import (
	"fmt"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/gpuops"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// The commands on a worker's GPUs (a cordon, a clear, an approval, a MIG
// layout) are the room gpuops's: the store finds the worker, refuses a
// revoked one, hands the room the record and its effects (roomEffects),
// and answers with the worker's record. A drain's cordon stops the
// tasks on the GPU here (gpudrain.go), the room knowing no tasks.

// MaxMIGLayout bounds a layout's MIG devices: seven slices at most.
const MaxMIGLayout = gpuops.MaxMIGLayout

// MIG layout request states (package record's words).
const (
	MIGPending = record.MIGPending
	MIGApplied = record.MIGApplied
	MIGFailed  = record.MIGFailed
)

// liveWorker is the worker of that id, refusing one not found or revoked.
func (s *Store) liveWorker(id string) (*Worker, error) {
	w, ok := s.workers[id]
	if !ok {
		return nil, fmt.Errorf("worker %s: %w", id, ErrNotFound)
	}
	if w.Status == workerRevoked {
		return nil, fmt.Errorf("worker %s is revoked: %w", w.ID, ErrConflict)
	}
	return w, nil
}

// cordonDevice cordons a worker's GPU or lifts the cordon (gpuops.Cordon);
// a drain then stops the tasks on it (gpudrain.go).
func (s *Store) cordonDevice(c command.CordonDevice) (WorkerRecord, error) {
	return s.onLiveWorker(c.WorkerID, func(w *Worker) error {
		if err := gpuops.Cordon(roomEffects{s}, w, c); err != nil || !c.Drain {
			return err
		}
		s.drainGPU(w, c)
		return nil
	})
}

// clearGPU records an admin's request to clear a GPU in fault
// (gpuops.Clear).
func (s *Store) clearGPU(c command.ClearGPU) (WorkerRecord, error) {
	return s.onLiveWorker(c.WorkerID, func(w *Worker) error { return gpuops.Clear(roomEffects{s}, w, c) })
}

// ApproveOutcome is the outcome of ApproveDevices: the worker, and the
// GPUs the approval brought into service.
type ApproveOutcome struct {
	Worker   WorkerRecord
	Approved []string
}

// approveDevices makes a worker's current inventory its approved one
// (gpuops.Approve).
func (s *Store) approveDevices(c command.ApproveDevices) (ApproveOutcome, error) {
	w, err := s.liveWorker(c.WorkerID)
	if err != nil {
		return ApproveOutcome{}, err
	}
	approved := gpuops.Approve(roomEffects{s}, w, c)
	return ApproveOutcome{Worker: s.workerRecord(w), Approved: approved}, nil
}

// setMIGLayout asks for, or drops the request for, the MIG layout of a
// worker's GPU (gpuops.SetMIGLayout).
func (s *Store) setMIGLayout(c command.SetMIGLayout) (WorkerRecord, error) {
	return s.onLiveWorker(c.WorkerID, func(w *Worker) error { return gpuops.SetMIGLayout(roomEffects{s}, w, c) })
}

// onLiveWorker applies op to the worker of that id, refusing one not
// found or revoked, and answers with its record once op succeeded.
func (s *Store) onLiveWorker(id string, op func(*Worker) error) (WorkerRecord, error) {
	w, err := s.liveWorker(id)
	if err != nil {
		return WorkerRecord{}, err
	}
	if err := op(w); err != nil {
		return WorkerRecord{}, err
	}
	return s.workerRecord(w), nil
}
