package state

import (
	"github.com/gpulayer/gpulayer/coordinator/command"
)

// AcquireReplay returns the assignments workerID's acquire under
// requestID was answered with that are still the worker's.
func (s *Store) AcquireReplay(workerID, requestID string) ([]AssignOutcome, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	w, ok := s.workers[workerID]
	if !ok {
		return nil, false
	}
	return s.acquireReplay(w, requestID)
}

func (s *Store) acquireReplay(w *Worker, requestID string) ([]AssignOutcome, bool) {
	rec := w.LastAcquire
	if requestID == "" || rec == nil || rec.RequestID != requestID {
		return nil, false
	}
	var out []AssignOutcome
	for _, ta := range append([]TaskAttempt{{TaskID: rec.TaskID, AttemptID: rec.AttemptID}}, rec.More...) {
		t, ok := s.tasks.Lookup(ta.TaskID)
		if ok && t.AttemptID == ta.AttemptID && t.WorkerID == w.ID && t.Active() {
			out = append(out, s.assignOutcome(t, true))
		}
	}
	return out, len(out) > 0
}

// recordAcquire notes the attempt an acquire under c.RequestID got: the
// first of the call, or one more of a call for several tasks.
func recordAcquire(w *Worker, c command.AssignTask) {
	if c.RequestID == "" {
		return
	}
	if rec := w.LastAcquire; rec != nil && rec.RequestID == c.RequestID && c.More {
		w.LastAcquire = rec.With(TaskAttempt{TaskID: c.TaskID, AttemptID: c.AttemptID})
		return
	}
	w.LastAcquire = &LastAcquire{RequestID: c.RequestID, TaskID: c.TaskID, AttemptID: c.AttemptID}
}
