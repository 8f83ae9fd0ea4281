package state

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/creds"
	"github.com/gpulayer/gpulayer/coordinator/state/fleetctl"
)

// Fleet control (drain, stop, resume, deregister, forget) is the room
// fleetctl's; the store finds the worker, stops its tasks when the room
// says (roomEffects.PreemptAll), and forgets a deregistered worker once
// it holds no task.

// controlWorker applies a drain, stop, resume or deregister
// (fleetctl.Control).
func (s *Store) controlWorker(c command.ControlWorker) (WorkerRecord, error) {
	w, ok := s.workers[c.WorkerID]
	if !ok {
		return WorkerRecord{}, fmt.Errorf("worker %s: %w", c.WorkerID, ErrNotFound)
	}
	acted, err := fleetctl.Control(roomEffects{s}, w, c)
	if err != nil {
		return WorkerRecord{}, err
	}
	if !acted {
		return s.workerRecord(w), nil
	}
	rec := s.workerRecord(w)
	s.forgetIfDone(w, c.Now)
	return rec, nil
}

// DrainOutcome is the outcome of ExpireDrains: the workers whose deadline
// passed and the tasks they were told to stop.
type DrainOutcome struct {
	Workers []string
	Tasks   int
}

// expireDrains stops the tasks left on every draining worker whose
// deadline has come.
func (s *Store) expireDrains(c command.ExpireDrains) (DrainOutcome, error) {
	var out DrainOutcome
	for _, id := range fleetctl.DrainsDue(maps.Values(s.workers), c.Now) {
		out.Workers = append(out.Workers, id)
		out.Tasks += fleetctl.ExpireDrain(roomEffects{s}, s.workers[id], c.Now)
	}
	return out, nil
}

// NextDrainDeadline is the earliest deadline of a draining worker whose
// tasks have not yet been told to stop, if any.
func (s *Store) NextDrainDeadline() (time.Time, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return fleetctl.NextDeadline(maps.Values(s.workers))
}

// preemptAll stops every task w holds, for reason, and says what it did,
// for the audit log. A task assigned but not started is requeued at once
// (its agent's start is then refused as stale, so it never runs); a
// running one is asked to stop (heartbeat answers name it) and is
// requeued when its attempt ends, however it ends.
func (s *Store) preemptAll(w *Worker, reason string, now time.Time) string {
	held := make([]string, 0, w.HeldCount())
	for id := range w.Held() {
		held = append(held, id)
	}
	slices.Sort(held)
	asked, requeued := 0, 0
	for _, id := range held {
		t := s.ownTask(s.tasks.Get(id))
		if t.Preempt != "" {
			continue
		}
		if s.preemptTask(t, reason, now) {
			requeued++
		} else {
			asked++
		}
	}
	return preemptDetail(asked, requeued)
}

// preemptTask stops t's attempt for reason: assigned but not started, it
// ends preempted and t is requeued at once (reporting true); running, it
// is asked to stop (heartbeat answers name it) and t is requeued when
// its attempt ends, however it ends. A preempted attempt uses up none of
// the task's attempts (Task.AttemptsUsed).
func (s *Store) preemptTask(t *Task, reason string, now time.Time) (requeued bool) {
	t.Preempt = reason
	if t.State != taskAssigned {
		return false
	}
	s.endAttempt(t, attemptPreempted, nil, "", now)
	s.requeueOrEnd(t, reason, now)
	return true
}

func preemptDetail(asked, requeued int) string {
	return fmt.Sprintf("%d running tasks told to stop, %d assigned tasks requeued", asked, requeued)
}

// forgetIfDone forgets a deregistering worker once it holds no task
// (dropWorker, forget.go). The audit log keeps the record of it.
func (s *Store) forgetIfDone(w *Worker, now time.Time) {
	if !w.Deregister || w.HeldCount() > 0 || w.Status == workerRevoked || s.workers[w.ID] != w {
		return
	}
	s.dropWorker(w, now)
	s.audit.Record(command.AuditEvent{Time: now, Kind: "worker.deregistered", WorkerID: w.ID, CredentialID: w.CredentialID, CredentialKind: creds.KindWorker, Subject: w.ID})
}
