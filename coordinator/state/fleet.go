package state

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/creds"
)

// Fleet control: a worker is drained (no new task; its tasks go on until
// a deadline), stopped (its tasks are stopped now), resumed, or
// deregistered (drained, then forgotten). A task stopped this way is
// preempted: its attempt ends as such, and it is requeued without using
// up one of its attempts.

// controlWorker applies a drain, stop, resume or deregister.
func (s *Store) controlWorker(c command.ControlWorker) (WorkerRecord, error) {
	w, ok := s.workers[c.WorkerID]
	if !ok {
		return WorkerRecord{}, fmt.Errorf("worker %s: %w", c.WorkerID, ErrNotFound)
	}
	switch w.Status {
	case workerRevoked, workerPending:
		return WorkerRecord{}, fmt.Errorf("worker %s is %s: %w", w.ID, w.Status, ErrConflict)
	}
	by := c.By
	if c.Self {
		by = drainedBySelf
	}
	switch c.Action {
	case command.ActionDrain, command.ActionDeregister:
		if err := s.drain(w, c, by); err != nil {
			return WorkerRecord{}, err
		}
	case command.ActionStop:
		w.Status = workerStopping
		w.DrainedBy = by
		w.DrainDeadline = time.Time{}
		s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "worker.stopped", Actor: c.By, WorkerID: w.ID, Subject: w.ID, Source: c.Source, Detail: s.preemptAll(w, "worker "+w.ID+" stopped", c.Now)})
	case command.ActionResume:
		if w.Status != workerDraining && w.Status != workerStopping {
			return s.workerRecord(w), nil
		}
		if c.Self && w.DrainedBy != drainedBySelf {
			return WorkerRecord{}, fmt.Errorf("worker %s was %s by %s; only an admin may resume it: %w", w.ID, w.Status, w.DrainedBy, ErrConflict)
		}
		w.Status = workerReady
		w.DrainedBy, w.DrainDeadline, w.Deregister = "", time.Time{}, false
		s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "worker.resumed", Actor: c.By, WorkerID: w.ID, Subject: w.ID, Source: c.Source})
		s.markPending()
	default:
		return WorkerRecord{}, fmt.Errorf("%w: worker action %q", ErrInvalid, c.Action)
	}
	rec := s.workerRecord(w)
	s.forgetIfDone(w, c.Now)
	return rec, nil
}

// drain makes w take no new task until resumed, with its tasks stopped
// at c.Deadline (now, when it is not after c.Now). A stopping worker
// stays stopping: a drain would let its tasks run on. A worker already
// drained by an admin keeps that drain when its agent asks for one.
func (s *Store) drain(w *Worker, c command.ControlWorker, by string) error {
	kind := "worker.drained"
	if c.Action == command.ActionDeregister {
		kind = "worker.deregistering"
		w.Deregister = true
	}
	switch {
	case w.Status == workerStopping:
		if c.Action == command.ActionDrain {
			return fmt.Errorf("worker %s is stopping; resume it first: %w", w.ID, ErrConflict)
		}
	case w.Status == workerDraining && c.Self && w.DrainedBy != drainedBySelf:
		// the admin's drain and deadline stand
	default:
		w.Status = workerDraining
		w.DrainedBy = by
		w.DrainDeadline = c.Deadline
	}
	detail := "deadline " + c.Deadline.UTC().Format(timeFormat)
	if w.Status == workerDraining && !w.DrainDeadline.IsZero() && !w.DrainDeadline.After(c.Now) {
		w.DrainDeadline = time.Time{}
		detail = s.preemptAll(w, "worker "+w.ID+" drained", c.Now)
	}
	s.audit.Record(command.AuditEvent{Time: c.Now, Kind: kind, Actor: c.By, WorkerID: w.ID, Subject: w.ID, Source: c.Source, Detail: detail})
	return nil
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
	for _, id := range s.drainsDue(c.Now) {
		w := s.workers[id]
		n := w.HeldCount()
		w.DrainDeadline = time.Time{}
		detail := s.preemptAll(w, "drain deadline passed on worker "+w.ID, c.Now)
		s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "worker.drain_deadline", WorkerID: w.ID, Subject: w.ID, Detail: detail})
		out.Workers = append(out.Workers, id)
		out.Tasks += n
	}
	return out, nil
}

// drainsDue lists, sorted, the draining workers whose deadline is at or
// before now.
func (s *Store) drainsDue(now time.Time) []string {
	var due []string
	for id, w := range s.workers {
		if w.Status == workerDraining && !w.DrainDeadline.IsZero() && !w.DrainDeadline.After(now) {
			due = append(due, id)
		}
	}
	sort.Strings(due)
	return due
}

// NextDrainDeadline is the earliest deadline of a draining worker whose
// tasks have not yet been told to stop, if any.
func (s *Store) NextDrainDeadline() (time.Time, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var next time.Time
	for _, w := range s.workers {
		if w.Status == workerDraining && !w.DrainDeadline.IsZero() && (next.IsZero() || w.DrainDeadline.Before(next)) {
			next = w.DrainDeadline
		}
	}
	return next, !next.IsZero()
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
