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
	"github.com/gpulayer/gpulayer/coordinator/state/output"
)

// ActiveTask is a task held by a worker, as the lease manager needs it.
type ActiveTask struct {
	TaskID          string
	AttemptID       string
	WorkerID        string
	LeaseSeconds    int
	LeaseExpiresAt  time.Time
	CancelRequested bool
	// Preempted: a drain, a stop or a preemption asked the attempt to
	// stop; ForTask: a preemption for another task (preempt.go), whose
	// victim gets its job's preemption grace.
	Preempted bool
	ForTask   bool
}

// AssignOutcome is the outcome of AssignTask: the task as assigned and
// its job's spec, which together make the acquire answer.
type AssignOutcome struct {
	Task       Task
	Spec       command.JobSpec
	LeaseUntil time.Time
	// Replayed is set when the answer is that of an earlier acquire under
	// the same request id (acquire.go), and nothing was assigned now.
	Replayed bool
}

func (s *Store) assignTask(c command.AssignTask) (AssignOutcome, error) {
	if w, ok := s.workers[c.WorkerID]; ok && !c.More {
		if out, ok := s.acquireReplay(w, c.RequestID); ok {
			return out[0], nil
		}
	}
	t, ok := s.tasks.Lookup(c.TaskID)
	if !ok {
		return AssignOutcome{}, fmt.Errorf("task %s: %w", c.TaskID, ErrNotFound)
	}
	if t.State != taskPending {
		return AssignOutcome{}, fmt.Errorf("task %s is %s: %w", t.ID, t.State, ErrConflict)
	}
	w, ok := s.workers[c.WorkerID]
	if !ok {
		return AssignOutcome{}, fmt.Errorf("worker %s: %w", c.WorkerID, ErrWorkerNotRegistered)
	}
	j := s.jobs.Get(t.JobID)
	if j.Spec.Gang {
		return AssignOutcome{}, fmt.Errorf("task %s is a gang member, assigned only with its gang: %w", t.ID, ErrConflict)
	}
	if err := place.CanRun(s.planView(), w, j, t, ""); err != nil {
		return AssignOutcome{}, err
	}
	if err := s.checkParallelism(j); err != nil { // dependencies.go
		return AssignOutcome{}, err
	}
	if err := s.checkNotWaiting(j); err != nil { // dependencies.go
		return AssignOutcome{}, err
	}
	if !place.DevicesFreeFor(s.planView(), w, c.Devices, j.Spec.Resources) || place.HeldFromOthers(s.planView(), w, c.Devices, t.ID, c.Now) {
		return AssignOutcome{}, fmt.Errorf("devices %v not free on %s: %w", c.Devices, w.ID, ErrConflict)
	}
	if err := place.TeamRoom(s.planView(), j, fit.TaskCenti(w, c.Devices, j.Spec.Resources)); err != nil {
		return AssignOutcome{}, err
	}
	t = s.ownTask(t)
	s.queue.Remove(keyOf(j), t)
	lease := j.Spec.LeaseSeconds
	if lease <= 0 {
		lease = DefaultLeaseSeconds
	}
	if c.LeaseSeconds > 0 && c.LeaseSeconds < lease {
		lease = c.LeaseSeconds
	}
	s.giveTask(t, w, c.AttemptID, c.Devices, lease, c.Metered, c.Now)
	recordAcquire(w, c)
	return s.assignOutcome(t, false), nil
}

// assignOutcome is the outcome of t's current assignment.
func (s *Store) assignOutcome(t *Task, replayed bool) AssignOutcome {
	return AssignOutcome{Task: t.Clone(), Spec: s.jobs.Get(t.JobID).Spec, LeaseUntil: t.LeaseExpiresAt, Replayed: replayed}
}

// claim checks that worker holds the task under attemptID. It is the one
// place where wrong_claimant, not_claimed and stale_attempt are decided.
func (s *Store) claim(taskID, workerID, attemptID string) (*Task, error) {
	t, ok := s.tasks.Lookup(taskID)
	if !ok {
		return nil, fmt.Errorf("task %s: %w", taskID, ErrNotFound)
	}
	if attemptID != t.AttemptID || attemptID == "" {
		for _, a := range t.Attempts {
			if a.ID == attemptID && a.WorkerID == workerID {
				return nil, fmt.Errorf("task %s: attempt %s ended (%s): %w", taskID, attemptID, a.State, ErrStaleAttempt)
			}
		}
		switch {
		case t.Active() && t.WorkerID != workerID:
			return nil, fmt.Errorf("task %s: %w", taskID, ErrWrongClaimant)
		case !t.Active():
			return nil, fmt.Errorf("task %s is %s: %w", taskID, t.State, ErrNotClaimed)
		}
		return nil, fmt.Errorf("task %s: attempt %q: %w", taskID, attemptID, ErrStaleAttempt)
	}
	if t.WorkerID != workerID {
		return nil, fmt.Errorf("task %s: %w", taskID, ErrWrongClaimant)
	}
	if !t.Active() {
		// The attempt named is the task's last one, but it lapsed and the
		// task then ended for want of attempts: to the worker that held
		// it, this is a stale attempt, the same answer it would get had
		// the task been retried.
		if a := t.Current(); a != nil && a.ID == attemptID && a.State == attemptLost {
			return nil, fmt.Errorf("task %s: attempt %s ended (%s): %w", taskID, attemptID, a.State, ErrStaleAttempt)
		}
		return nil, fmt.Errorf("task %s is %s: %w", taskID, t.State, ErrNotClaimed)
	}
	return t, nil
}

func (s *Store) startTask(c command.StartTask) (Task, error) {
	t, err := s.claim(c.TaskID, c.WorkerID, c.AttemptID)
	if err != nil {
		return Task{}, err
	}
	t = s.ownTask(t)
	if t.State == taskAssigned {
		t.State = taskRunning
		t.ExecutedBy = c.WorkerID
		t.UpdatedAt = c.Now
		a := t.OwnCurrent()
		a.State = taskRunning
		a.StartedAt = c.Now
		a.Preflight = clonePreflight(c.Preflight) // preflight.go
		s.inuse.started(t.ID, backfill.EndOf(t, s.jobs.Get(t.JobID)))
		s.derived.DropView(t.WorkerID) // workerview.go
	}
	return t.Clone(), nil
}

func (s *Store) appendLogs(c command.AppendLogs) (bool, error) {
	t, err := s.claim(c.TaskID, c.WorkerID, c.AttemptID)
	if err != nil {
		return false, err
	}
	if c.Seq <= t.LastLogSeq {
		return false, nil // duplicate or replayed chunk
	}
	t = s.ownTask(t)
	t.LastLogSeq = c.Seq
	if t.LogBytes >= MaxLogBytesPerTask || t.LogCut {
		return false, nil
	}
	data := c.Data
	switch {
	case t.LogBytes+len(data) > MaxLogBytesPerTask:
		// The task's bound counts whole: the total sees it full.
		data = TaskOutputMarker
		s.outputBytes += MaxLogBytesPerTask - t.LogBytes
		t.LogBytes = MaxLogBytesPerTask
	case c.MaxOutputBytes > 0 && s.outputBytes+len(data) > c.MaxOutputBytes:
		data = TotalOutputMarker
		t.LogCut = true
	default:
		t.LogBytes += len(data)
		s.outputBytes += len(data)
	}
	s.keepOutput(t.ID, output.Record{Attempt: len(t.Attempts), Stream: c.Stream, Seq: c.Seq, Data: data, Time: c.Now})
	return true, nil
}

func submissionKey(taskID, submissionID string) string { return taskID + "/" + submissionID }

// checkTaskID refuses a task id that is empty or holds a slash: a finish
// is remembered under submissionKey, which a slash in the id would make
// ambiguous. Submissions and restores both check it.
func checkTaskID(id string) error {
	if id == "" || strings.Contains(id, "/") {
		return fmt.Errorf("%w: task id %q (empty or with a slash)", ErrInvalid, id)
	}
	return nil
}

// finishTask ends the current attempt. Its outcome is the task as the
// finish left it; under a submission id that record is kept, and a
// replay of the same body has it for outcome again (the HTTP layer
// renders it, so the answer is the first one byte for byte).
func (s *Store) finishTask(c command.FinishTask) (Task, error) {
	if c.SubmissionID != "" {
		if prev, ok := s.submissions.Lookup(submissionKey(c.TaskID, c.SubmissionID)); ok {
			if prev.BodyHash != c.BodyHash {
				return Task{}, fmt.Errorf("submission %s was used with a different body: %w", c.SubmissionID, ErrConflict)
			}
			return prev.Task.Clone(), nil
		}
	}
	t, err := s.claim(c.TaskID, c.WorkerID, c.AttemptID)
	if err != nil {
		return Task{}, err
	}
	t = s.ownTask(t)
	if c.RequireRecorded {
		if err := s.artifacts.CheckRecorded(c.Artifacts); err != nil {
			return Task{}, err
		}
	}
	if err := s.checkProof(c.RequireProof, t, c.WorkerID, c.Artifacts); err != nil {
		return Task{}, err
	}
	if err := s.checkCheckpoint(t, c.Checkpoint, c.WorkerID, c.RequireProof); err != nil { // checkpoint.go
		return Task{}, err
	}
	s.keepCheckpoint(t, c.Checkpoint, c.AttemptID, c.WorkerID)
	code := c.ExitCode
	state := taskSucceeded
	switch {
	case t.CancelRequested:
		state = taskCancelled
	case code != 0:
		state = taskFailed
	}
	reason := ""
	switch {
	case state == taskCancelled:
		reason = "cancelled"
	case state == taskFailed && c.Reason != "":
		reason = fmt.Sprintf("%s (exit code %d)", c.Reason, code)
	case state == taskFailed:
		reason = fmt.Sprintf("exit code %d", code)
	}
	if state == taskFailed && t.Preempt != "" {
		// Stopped by a drain or a stop: requeued, the attempt not counted.
		s.endAttempt(t, attemptPreempted, &code, c.Reason, c.Now)
		s.requeueOrEnd(t, t.Attempts[len(t.Attempts)-1].Reason, c.Now)
		s.settleGang(t, c.Now)
		s.keepSubmission(c, t)
		return t.Clone(), nil
	}
	if state == taskFailed && s.jobs.Get(t.JobID).Spec.Gang {
		// A gang member that fails takes its gang down, and the gang is
		// run again whole while the member has attempts left: one rank's
		// crash is what a gang's retries are for.
		s.endAttempt(t, taskFailed, &code, c.Reason, c.Now)
		s.requeueOrEnd(t, reason, c.Now)
		if t.State == taskFailed {
			t.ExitCode = &code
		}
		s.settleGang(t, c.Now)
		s.keepSubmission(c, t)
		return t.Clone(), nil
	}
	// The attempt keeps the agent's words only: an entry written before
	// finishes carried a reason must apply as it always did.
	s.endAttempt(t, state, &code, c.Reason, c.Now)
	t.State = state
	t.ExitCode = &code
	t.Output = c.Output
	t.Artifacts = slices.Clone(c.Artifacts)
	team := command.TeamOf(s.jobs.Get(t.JobID).Team)
	for _, out := range c.Artifacts { // the job's team may read its outputs
		s.artifacts.Grant(out.SHA256, team, c.WorkerID) // artifacts/quota.go
	}
	t.SubmittedBy = c.WorkerID
	t.Reason = reason
	s.keepSubmission(c, t)
	return t.Clone(), nil
}

// keepSubmission remembers a finish under its submission id, with the
// task as it left it, for a replay's answer.
func (s *Store) keepSubmission(c command.FinishTask, t *Task) {
	if c.SubmissionID != "" {
		t.Freeze() // the record is the finish's outcome from here on
		s.submissions.Set(submissionKey(c.TaskID, c.SubmissionID), &Submission{BodyHash: c.BodyHash, Task: t})
	}
}

func (s *Store) failTask(c command.FailTask) (Task, error) {
	t, err := s.claim(c.TaskID, c.WorkerID, c.AttemptID)
	if err != nil {
		return Task{}, err
	}
	if err := s.checkCheckpoint(t, c.Checkpoint, c.WorkerID, c.RequireProof); err != nil { // checkpoint.go
		return Task{}, err
	}
	t = s.ownTask(t)
	reason := c.Reason
	if reason == "" {
		reason = "failed"
	}
	switch {
	case c.GPUFault != "":
		if err := s.gpuFault(t, c, reason); err != nil { // gpufault.go
			return Task{}, err
		}
	case t.Preempt != "" && !c.Permanent:
		s.endAttempt(t, attemptPreempted, nil, reason, c.Now)
		s.requeueOrEnd(t, reason, c.Now)
	case c.Permanent && !t.CancelRequested:
		s.endAttempt(t, taskFailed, nil, reason, c.Now)
		s.failNow(t, reason+" (not retried: no attempt can succeed)", c.Now)
	default:
		s.endAttempt(t, taskFailed, nil, reason, c.Now)
		s.requeueOrEnd(t, reason, c.Now)
	}
	s.keepCheckpoint(t, c.Checkpoint, c.AttemptID, c.WorkerID)
	keepPreflight(t, c.AttemptID, c.Preflight) // preflight.go
	s.settleGang(t, c.Now)
	return t.Clone(), nil
}

func (s *Store) loseAttempt(c command.LoseAttempt) (Task, error) {
	t, ok := s.tasks.Lookup(c.TaskID)
	if !ok {
		return Task{}, fmt.Errorf("task %s: %w", c.TaskID, ErrNotFound)
	}
	if t.AttemptID != c.AttemptID || !t.Active() {
		return Task{}, fmt.Errorf("task %s attempt %s: %w", c.TaskID, c.AttemptID, ErrStaleAttempt)
	}
	t = s.ownTask(t)
	reason := c.Reason
	if reason == "" {
		reason = "lease expired"
	}
	state := attemptLost
	if t.Preempt != "" {
		state = attemptPreempted
	}
	s.endAttempt(t, state, nil, reason, c.Now)
	s.requeueOrEnd(t, reason, c.Now)
	s.settleGang(t, c.Now)
	return t.Clone(), nil
}

// endAttempt closes the current attempt and frees the worker's hold.
func (s *Store) endAttempt(t *Task, state string, code *int, reason string, now time.Time) {
	s.mustOwn(t)
	a := t.OwnCurrent()
	a.State = state
	a.EndedAt = now
	a.ExitCode = code
	a.Reason = reason
	if state == attemptPreempted && t.Preempt != "" {
		a.Reason = t.Preempt
		if reason != "" && reason != t.Preempt {
			a.Reason += ": " + reason
		}
	}
	s.meter(s.jobs.Get(t.JobID), a)
	t.Preempt = ""
	s.inuse.release(t.ID)
	s.derived.DropView(t.WorkerID) // workerview.go
	if w, ok := s.workers[t.WorkerID]; ok {
		w.Release(t.ID)
		s.forgetIfDone(w, now)
	}
	t.UpdatedAt = now
	s.markPending() // the worker's devices are free again
}

// requeueOrEnd sends a task whose attempt ended abnormally back to the
// queue while attempts remain, else fails it (or cancels it if asked).
func (s *Store) requeueOrEnd(t *Task, reason string, now time.Time) {
	s.mustOwn(t)
	j := s.jobs.Get(t.JobID)
	maxAttempts := j.Spec.MaxAttempts
	if maxAttempts <= 0 {
		maxAttempts = DefaultMaxAttempts
	}
	t.Devices = nil
	switch {
	case t.CancelRequested:
		t.State = taskCancelled
		t.Reason = "cancelled"
	case t.AttemptsUsed() < maxAttempts:
		t.State = taskPending
		t.Reason = reason
		t.WorkerID = ""
		t.AttemptID = ""
		s.queue.Push(keyOf(j), j.Spec.Priority, t)
	default:
		t.State = taskFailed
		t.Reason = fmt.Sprintf("%s (after %d attempts)", reason, len(t.Attempts))
	}
	t.UpdatedAt = now
}

// Task returns a copy of one task.
func (s *Store) Task(id string) (Task, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, ok := s.tasks.Lookup(id)
	if !ok {
		return Task{}, fmt.Errorf("task %s: %w", id, ErrNotFound)
	}
	return t.Clone(), nil
}

// HeldAttempt reports the attempt under which worker holds task, if any.
func (s *Store) HeldAttempt(taskID, workerID string) (string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, ok := s.tasks.Lookup(taskID)
	if !ok || !t.Active() || t.WorkerID != workerID {
		return "", false
	}
	return t.AttemptID, true
}

// AllActive lists every active task (for re-arming leases on a new leader).
func (s *Store) AllActive() []ActiveTask {
	s.mu.RLock()
	defer s.mu.RUnlock()
	// The workers' active sets index exactly the active tasks (a task is
	// assigned only to a registered worker, and leaves the set when its
	// attempt ends), so this costs the active tasks, not every task kept.
	var out []ActiveTask
	for _, w := range s.workers {
		for id := range w.Held() {
			if t := s.tasks.Get(id); t != nil && t.Active() {
				out = append(out, ActiveTask{TaskID: t.ID, AttemptID: t.AttemptID, WorkerID: t.WorkerID, LeaseSeconds: t.LeaseSeconds, LeaseExpiresAt: t.LeaseExpiresAt, CancelRequested: t.CancelRequested, Preempted: t.Preempt != "", ForTask: preemptedForTask(t)})
			}
		}
	}
	slices.SortFunc(out, func(a, b ActiveTask) int {
		if a.TaskID < b.TaskID {
			return -1
		}
		if a.TaskID > b.TaskID {
			return 1
		}
		return 0
	})
	return out
}
