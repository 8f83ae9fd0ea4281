package state

import (
	"slices"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// LastAcquire remembers, per worker, the request id of its last acquire
// and the attempts it was answered with (the first in TaskID and
// AttemptID, any more of a call for several tasks in More). An agent
// retries a call whose answer it lost with the same id, so one record per
// worker is enough to answer the retry as the first call was answered, on
// this leader or the next (it is replicated).
type LastAcquire struct {
	RequestID string        `json:"request_id"`
	TaskID    string        `json:"task_id"`
	AttemptID string        `json:"attempt_id"`
	More      []TaskAttempt `json:"more,omitempty"`
}

// TaskAttempt names one attempt of a task.
type TaskAttempt struct {
	TaskID    string `json:"task_id"`
	AttemptID string `json:"attempt_id"`
}

// with returns a copy of rec with more assignments: rec itself may be
// shared with a capture.
func (rec *LastAcquire) with(more ...TaskAttempt) *LastAcquire {
	c := *rec
	c.More = append(slices.Clip(rec.More), more...)
	return &c
}

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
		w.LastAcquire = rec.with(TaskAttempt{TaskID: c.TaskID, AttemptID: c.AttemptID})
		return
	}
	w.LastAcquire = &LastAcquire{RequestID: c.RequestID, TaskID: c.TaskID, AttemptID: c.AttemptID}
}
