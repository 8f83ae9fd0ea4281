package state

import (
	"github.com/gpulayer/gpulayer/coordinator/command"
)

// LastAcquire remembers, per worker, the request id of its last acquire
// and the attempt it was answered with. An agent asks for one task at a
// time per call and retries a call whose answer it lost with the same id,
// so one record per worker is enough to answer the retry as the first
// call was answered, on this leader or the next (it is replicated).
type LastAcquire struct {
	RequestID string `json:"request_id"`
	TaskID    string `json:"task_id"`
	AttemptID string `json:"attempt_id"`
}

// AcquireReplay returns the assignment workerID's acquire under requestID
// was answered with, if that attempt is still the worker's.
func (s *Store) AcquireReplay(workerID, requestID string) (AssignOutcome, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	w, ok := s.workers[workerID]
	if !ok {
		return AssignOutcome{}, false
	}
	return s.acquireReplay(w, requestID)
}

func (s *Store) acquireReplay(w *Worker, requestID string) (AssignOutcome, bool) {
	rec := w.LastAcquire
	if requestID == "" || rec == nil || rec.RequestID != requestID {
		return AssignOutcome{}, false
	}
	t, ok := s.tasks[rec.TaskID]
	if !ok || t.AttemptID != rec.AttemptID || t.WorkerID != w.ID || !t.Active() {
		return AssignOutcome{}, false
	}
	return s.assignOutcome(t, true), true
}

// recordAcquire notes the attempt an acquire under c.RequestID got.
func recordAcquire(w *Worker, c command.AssignTask) {
	if c.RequestID == "" {
		return
	}
	w.LastAcquire = &LastAcquire{RequestID: c.RequestID, TaskID: c.TaskID, AttemptID: c.AttemptID}
}
