package state

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/backfill"
	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
	"github.com/gpulayer/gpulayer/coordinator/sched/place"
)

// Gang tasks. A gang job's tasks are assigned together or not at all:
// the leader plans a placement of every member (place.Gang) when a worker's
// acquire finds the gang at the head of what it could take, and proposes
// it as one AssignGang, which the state machine checks whole before it
// changes anything. Nothing is ever held while waiting for the rest, so
// two gangs that want the same GPUs cannot deadlock: one placement
// commits, the other no longer fits and waits.
//
// The acquiring worker's members are its answer; the others are
// delivered to their workers by those workers' next acquire
// (GangDeliveries). Members meet through rendezvous (JoinRendezvous,
// Rendezvous). One member's attempt ending other than in success ends
// every other member's (settleGang): the gang is retried as a whole while
// the failing member has attempts left, the others' attempts counted as
// preempted, and once any member has succeeded it is not retried at all.

// gangTasks returns j's tasks by rank, or false unless all are pending.
func (s *Store) gangTasks(j *Job) ([]*Task, bool) { return place.GangMembers(s.tasks.Get, j) }

// assignGang applies a gang placement, whole or not at all.
func (s *Store) assignGang(c command.AssignGang) ([]AssignOutcome, error) {
	if w, ok := s.workers[c.WorkerID]; ok {
		if out, ok := s.acquireReplay(w, c.RequestID); ok {
			return out, nil
		}
	}
	j, ok := s.jobs.Lookup(c.JobID)
	if !ok {
		return nil, fmt.Errorf("job %s: %w", c.JobID, ErrNotFound)
	}
	if !j.Spec.Gang {
		return nil, fmt.Errorf("job %s is not a gang: %w", j.ID, ErrInvalid)
	}
	ts, ok := s.gangTasks(j)
	if !ok {
		return nil, fmt.Errorf("job %s: not every member is pending: %w", j.ID, ErrConflict)
	}
	if err := s.checkNotWaiting(j); err != nil { // dependencies.go
		return nil, err
	}
	if len(c.Members) != len(ts) {
		return nil, fmt.Errorf("job %s has %d members, the placement %d: %w", j.ID, len(ts), len(c.Members), ErrInvalid)
	}
	tent := place.NewTentative()
	placed := map[string]bool{}
	var centi int64
	for _, m := range c.Members {
		t := s.tasks.Get(m.TaskID)
		w := s.workers[m.WorkerID]
		switch {
		case t == nil || t.JobID != j.ID || placed[t.ID]:
			return nil, fmt.Errorf("task %s is not a member of job %s, or is placed twice: %w", m.TaskID, j.ID, ErrInvalid)
		case w == nil:
			return nil, fmt.Errorf("worker %s: %w", m.WorkerID, ErrWorkerNotRegistered)
		case m.AttemptID == "":
			return nil, fmt.Errorf("task %s: no attempt id: %w", t.ID, ErrInvalid)
		}
		if err := place.CanRun(s.planView(), w, j, t, ""); err != nil {
			return nil, err
		}
		if !place.MemberFits(j, w, tent) {
			return nil, fmt.Errorf("job %s: too many members on %s: %w", j.ID, w.ID, ErrConflict)
		}
		if tent.AnyGiven(m.Devices) || !place.DevicesFree(s.planView(), w, m.Devices) || !place.DevicesFit(w, m.Devices, j.Spec.Resources) || place.HeldFromOthers(s.planView(), w, m.Devices, t.ID, c.Now) {
			return nil, fmt.Errorf("devices %v not free on %s: %w", m.Devices, w.ID, ErrConflict)
		}
		tent.Take(w.ID, m.Devices)
		placed[t.ID] = true
		centi += fit.TaskCenti(w, m.Devices, j.Spec.Resources)
	}
	if err := place.TeamRoom(s.planView(), j, centi); err != nil {
		return nil, err
	}
	lease := j.Spec.LeaseSeconds
	if lease <= 0 {
		lease = DefaultLeaseSeconds
	}
	var out []AssignOutcome
	var mine []TaskAttempt
	for _, m := range c.Members {
		t, w := s.ownTask(s.tasks.Get(m.TaskID)), s.workers[m.WorkerID]
		l := lease
		if w.ID == c.WorkerID && c.LeaseSeconds > 0 {
			l = min(l, c.LeaseSeconds)
		}
		s.queue.Remove(keyOf(j), t)
		s.giveTask(t, w, m.AttemptID, m.Devices, l, c.Metered, c.Now)
		if w.ID == c.WorkerID {
			out = append(out, s.assignOutcome(t, false))
			mine = append(mine, TaskAttempt{TaskID: t.ID, AttemptID: t.AttemptID})
		}
	}
	if w := s.workers[c.WorkerID]; w != nil && c.RequestID != "" && len(mine) > 0 {
		if rec := w.LastAcquire; rec != nil && rec.RequestID == c.RequestID {
			w.LastAcquire = rec.With(mine...) // a later task of one acquire for several
		} else {
			// One task is More nil, not empty: a snapshot omits an empty
			// list, and a restored replica must hold what this one does.
			w.LastAcquire = &LastAcquire{RequestID: c.RequestID, TaskID: mine[0].TaskID, AttemptID: mine[0].AttemptID, More: slices.Clip(mine[1:])}
			if len(mine) == 1 {
				w.LastAcquire.More = nil
			}
		}
	}
	// The other members' workers may be waiting in acquire: wake them.
	s.markPending()
	return out, nil
}

// giveTask makes t w's under a new attempt.
func (s *Store) giveTask(t *Task, w *Worker, attemptID string, devs []string, lease int, metered bool, now time.Time) {
	s.mustOwn(t)
	t.LeaseSeconds = lease
	t.State = taskAssigned
	t.AttemptID = attemptID
	t.WorkerID = w.ID
	t.Devices = devs
	t.LeaseExpiresAt = now.Add(time.Duration(lease) * time.Second)
	t.LastLogSeq = 0
	t.UpdatedAt = now
	a := Attempt{ID: attemptID, Number: len(t.Attempts) + 1, WorkerID: w.ID, State: taskAssigned, Devices: devs, AssignedAt: now}
	if metered {
		a.Meter = fit.Meter(w, devs, s.jobs.Get(t.JobID).Spec.Resources)
	}
	t.Attempts = append(t.Attempts, a)
	w.Hold(t.ID)
	s.releaseHolds(w, t.ID, now) // preempt_holds.go
	j := s.jobs.Get(t.JobID)
	s.inuse.hold(t.ID, command.TeamOf(j.Team), fit.TaskCenti(w, devs, j.Spec.Resources), backfill.EndOf(t, j))
	s.derived.DropView(w.ID) // workerview.go
}

// GangDeliveries lists the gang members assigned to workerID that have
// not started: a placement made by another worker's acquire reaches this
// worker through its own acquire, which hands these out again until the
// agent starts them (the agent ignores an attempt it already runs).
func (s *Store) GangDeliveries(workerID string) []AssignOutcome {
	s.mu.RLock()
	defer s.mu.RUnlock()
	w, ok := s.workers[workerID]
	if !ok {
		return nil
	}
	var out []AssignOutcome
	for id := range w.Held() {
		t := s.tasks.Get(id)
		if t != nil && t.State == taskAssigned && s.jobs.Get(t.JobID).Spec.Gang {
			out = append(out, s.assignOutcome(t, true))
		}
	}
	slices.SortFunc(out, func(a, b AssignOutcome) int { return strings.Compare(a.Task.ID, b.Task.ID) })
	return out
}

// joinRendezvous records where the member's current attempt is reached.
func (s *Store) joinRendezvous(c command.JoinRendezvous) (struct{}, error) {
	t, err := s.claim(c.TaskID, c.WorkerID, c.AttemptID)
	if err != nil {
		return struct{}{}, err
	}
	j := s.jobs.Get(t.JobID)
	switch {
	case !j.Spec.Gang:
		return struct{}{}, fmt.Errorf("task %s is not a gang member: %w", t.ID, ErrConflict)
	case t.Index == 0 && (c.Port <= 0 || c.Port > 65535):
		return struct{}{}, fmt.Errorf("rank 0 is the master and must give a port: %w", ErrInvalid)
	}
	t = s.ownTask(t)
	t.OwnCurrent().Rendezvous = &Endpoint{Address: c.Address, Port: c.Port}
	t.UpdatedAt = c.Now
	return struct{}{}, nil
}

// GangPeer is one member of a gang that met (Rendezvous).
type GangPeer struct {
	Rank     int
	TaskID   string
	WorkerID string
	Endpoint Endpoint
}

// Rendezvous reports the gang of taskID's attempt attemptID: every
// member by rank once all of the gang's current attempts have joined,
// else ready false. A stale or foreign attempt gets claim's error.
func (s *Store) Rendezvous(taskID, workerID, attemptID string) ([]GangPeer, bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, err := s.claim(taskID, workerID, attemptID)
	if err != nil {
		return nil, false, err
	}
	j := s.jobs.Get(t.JobID)
	peers := make([]GangPeer, 0, len(j.TaskIDs))
	for _, id := range j.TaskIDs {
		m := s.tasks.Get(id)
		a := m.Current()
		if !m.Active() || a == nil || a.Rendezvous == nil {
			return nil, false, nil
		}
		peers = append(peers, GangPeer{Rank: m.Index, TaskID: m.ID, WorkerID: m.WorkerID, Endpoint: *a.Rendezvous})
	}
	slices.SortFunc(peers, func(a, b GangPeer) int { return a.Rank - b.Rank })
	return peers, true, nil
}

// settleGang follows an attempt of t that ended other than in success:
// when t is a gang member, every other member's attempt ends too. While
// t goes back to the queue and no member has succeeded, they are
// requeued, preempted (not counted); otherwise the whole gang fails.
func (s *Store) settleGang(t *Task, now time.Time) {
	j := s.jobs.Get(t.JobID)
	if j == nil || !j.Spec.Gang || t.State == taskCancelled {
		return
	}
	succeeded := slices.ContainsFunc(j.TaskIDs, func(id string) bool { return s.tasks.Get(id).State == taskSucceeded })
	why := fmt.Sprintf("gang member %d (task %s) ended: %s", t.Index, t.ID, t.Reason)
	retry := t.State == taskPending && !succeeded
	if t.State == taskPending && succeeded {
		s.mustOwn(t)
		s.queue.Remove(keyOf(j), t)
		t.State = taskFailed
		t.Reason += " (not retried: a gang is retried only as a whole, and a member has succeeded)"
	}
	for _, id := range j.TaskIDs {
		o := s.tasks.Get(id)
		if o == t || o.Terminal() || o.State == taskPending && retry {
			continue
		}
		o = s.ownTask(o)
		switch {
		case o.Active() && retry:
			o.Preempt = why
			s.endAttempt(o, attemptPreempted, nil, "", now)
			s.requeueOrEnd(o, why, now)
		case o.Active():
			s.endAttempt(o, taskFailed, nil, why, now)
			s.failNow(o, why, now)
		case o.State == taskPending && !retry:
			s.queue.Remove(keyOf(j), o)
			s.failNow(o, why, now)
		}
	}
}

// failNow ends t as failed for reason, without a retry.
func (s *Store) failNow(t *Task, reason string, now time.Time) {
	s.mustOwn(t)
	t.Devices = nil
	t.State = taskFailed
	t.Reason = reason
	t.UpdatedAt = now
}
