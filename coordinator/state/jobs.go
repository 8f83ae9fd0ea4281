package state

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/place"
	"github.com/gpulayer/gpulayer/coordinator/state/deps"
)

// Defaults applied to a job spec at submission.
const (
	DefaultLeaseSeconds = 30
	DefaultMaxAttempts  = 3
)

// SubmitOutcome is the outcome of SubmitJob: the job, and whether this
// command created it (else an earlier one under the same idempotency key
// did).
type SubmitOutcome struct {
	Created bool
	Job     JobRecord
}

// sameSpec reports whether a job recorded with digest recorded has the
// spec of a submit whose digest is hash. Digests of one kind are compared
// as they are; across kinds (a job from before EncodeSubmit, retried
// after), the submit's spec is digested again the recorded job's way.
func sameSpec(recorded, hash string, spec command.JobSpec) bool {
	newRecorded := strings.HasPrefix(recorded, command.SpecDigestPrefix)
	newHash := strings.HasPrefix(hash, command.SpecDigestPrefix)
	switch {
	case newRecorded == newHash:
		return recorded == hash
	case newRecorded:
		return recorded == command.SpecDigest(spec)
	default:
		return recorded == command.LegacySpecDigest(spec)
	}
}

func (s *Store) submitJob(c command.SubmitJob) (SubmitOutcome, error) {
	count := c.Spec.Count
	if count <= 0 {
		count = 1
	}
	if len(c.TaskIDs) != count || c.JobID == "" {
		return SubmitOutcome{}, fmt.Errorf("%w: job needs %d task ids", ErrInvalid, count)
	}
	if _, dup := s.jobs.Lookup(c.JobID); dup {
		return SubmitOutcome{}, fmt.Errorf("job %s exists: %w", c.JobID, ErrConflict)
	}
	hash := c.SpecHash
	if hash == "" {
		hash = command.LegacySpecDigest(c.Spec) // an entry from before the leader took it
	}
	if c.Spec.IdempotencyKey != "" {
		key := c.CreatedBy + "/" + c.Spec.IdempotencyKey
		if id, ok := s.idempotency.Lookup(key); ok {
			j := s.jobs.Get(id)
			if !sameSpec(j.SpecHash, hash, c.Spec) {
				return SubmitOutcome{}, fmt.Errorf("idempotency key %q was used with a different job: %w", c.Spec.IdempotencyKey, ErrConflict)
			}
			return SubmitOutcome{Created: false, Job: s.jobRecord(j)}, nil
		}
	}
	if err := s.checkPendingQuota(c.CreatedBy, c.MaxPendingJobs); err != nil {
		return SubmitOutcome{}, err
	}
	if err := s.targetExists(c.Spec.Target); err != nil {
		return SubmitOutcome{}, err
	}
	if _, ok := s.teams.Get(command.TeamOf(c.Team)); !ok {
		return SubmitOutcome{}, fmt.Errorf("team %s: %w", c.Team, ErrNotFound)
	}
	if err := deps.Check(c, count, func(id string) bool { _, ok := s.jobs.Lookup(id); return ok }); err != nil {
		return SubmitOutcome{}, err
	}
	// Every check before any change: a refused job leaves nothing behind.
	seen := make(map[string]bool, len(c.TaskIDs))
	for _, id := range c.TaskIDs {
		if err := checkTaskID(id); err != nil {
			return SubmitOutcome{}, err
		}
		switch {
		case seen[id]:
			return SubmitOutcome{}, fmt.Errorf("%w: task id %s listed twice", ErrInvalid, id)
		case s.tasks.Has(id):
			return SubmitOutcome{}, fmt.Errorf("task %s exists: %w", id, ErrConflict)
		}
		seen[id] = true
	}
	lease := c.Spec.LeaseSeconds
	if lease <= 0 {
		lease = DefaultLeaseSeconds
	}
	j := &Job{ID: c.JobID, Spec: c.Spec, SpecHash: hash, CreatedBy: c.CreatedBy, CreatedAt: c.Now, UpdatedAt: c.Now, TaskIDs: c.TaskIDs, Seq: s.nextSeq(), Team: c.Team}
	j.SetRules(rulesOf(j.Spec))
	for i, id := range c.TaskIDs {
		t := &Task{ID: id, JobID: j.ID, Index: i, Seq: s.nextSeq(), State: taskPending, LeaseSeconds: lease, CreatedAt: c.Now, UpdatedAt: c.Now}
		t.Stamp(s.gen.Load())
		s.tasks.Set(id, t)
	}
	s.jobs.Set(j.ID, j)
	s.deps.Admit(depTables{s}, j, c.Now) // waits, cancelled, or queued (its window)
	s.jobOrder = append(s.jobOrder, j.ID)
	s.noteOpenJob(j)
	if c.Spec.IdempotencyKey != "" {
		s.idempotency.Set(c.CreatedBy+"/"+c.Spec.IdempotencyKey, j.ID)
	}
	s.markPending()
	return SubmitOutcome{Created: true, Job: s.jobRecord(j)}, nil
}

func (s *Store) cancelJob(c command.CancelJob) (JobRecord, error) {
	j, ok := s.jobs.Lookup(c.JobID)
	if !ok {
		return JobRecord{}, fmt.Errorf("job %s: %w", c.JobID, ErrNotFound)
	}
	if s.jobTerminal(j) {
		return JobRecord{}, fmt.Errorf("job %s has already ended: %w", j.ID, ErrConflict)
	}
	for _, id := range j.TaskIDs {
		t := s.tasks.Get(id)
		if t.Terminal() {
			continue
		}
		t = s.ownTask(t)
		switch {
		case t.State == taskPending:
			s.queue.Remove(keyOf(j), t)
			t.State = taskCancelled
			t.Reason = "cancelled by " + c.By
			t.UpdatedAt = c.Now
		case t.Active():
			t.CancelRequested = true
			t.UpdatedAt = c.Now
		}
	}
	j = s.ownJob(j)
	j.UpdatedAt = c.Now
	s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "job.cancelled", Actor: c.By, Subject: j.ID, Team: command.TeamOf(j.Team), Source: c.Source, Detail: "created by " + j.CreatedBy})
	return s.jobRecord(j), nil
}

// Job returns a copy of a job with its tasks.
func (s *Store) Job(id string) (JobRecord, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	j, ok := s.jobs.Lookup(id)
	if !ok {
		return JobRecord{}, fmt.Errorf("job %s: %w", id, ErrNotFound)
	}
	return s.readJob(j), nil
}

// JobEnded reports whether a job has ended (every task terminal), without
// copying it.
func (s *Store) JobEnded(id string) (bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	j, ok := s.jobs.Lookup(id)
	if !ok {
		return false, fmt.Errorf("job %s: %w", id, ErrNotFound)
	}
	return s.jobTerminal(j), nil
}

// readJob is a job's record as a read shows it, with why its pending
// tasks wait.
func (s *Store) readJob(j *Job) JobRecord {
	r := s.jobRecord(j)
	for _, t := range r.Tasks {
		if t.State == taskPending {
			r.PendingReason = place.Why(s.planView(), j)
			break
		}
	}
	return r
}

// JobAccess is what decides who may read or cancel a job: who created
// it and the team it runs for.
type JobAccess struct {
	Owner string
	Team  string
}

// JobAccessOf returns who created a job and its team (default for one
// from before teams).
func (s *Store) JobAccessOf(id string) (JobAccess, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	j, ok := s.jobs.Lookup(id)
	if !ok {
		return JobAccess{}, fmt.Errorf("job %s: %w", id, ErrNotFound)
	}
	return JobAccess{Owner: j.CreatedBy, Team: command.TeamOf(j.Team)}, nil
}

// JobEntry is one job of a page, with its sequence number: the position
// a next page starts below.
type JobEntry struct {
	Seq uint64
	Job JobRecord
}

// JobsPage lists at most limit jobs (limit <= 0: every one) newest first
// (by creation, which is the order of their sequence numbers), starting
// below the sequence number before (0: from the newest). more reports
// whether older jobs remain. Jobs created while a client pages go to the
// front, so the pages it has not read yet do not shift.
func (s *Store) JobsPage(before uint64, limit int) (page []JobEntry, more bool) {
	return s.TeamJobsPage("", before, limit)
}

// TeamJobsPage is JobsPage over one team's jobs ("": every team's).
func (s *Store) TeamJobsPage(team string, before uint64, limit int) (page []JobEntry, more bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	end := len(s.jobOrder)
	if before > 0 {
		end = sort.Search(len(s.jobOrder), func(i int) bool { return s.jobs.Get(s.jobOrder[i]).Seq >= before })
	}
	if limit <= 0 {
		limit = end
	}
	page = make([]JobEntry, 0, min(limit, end))
	i := end - 1
	for ; i >= 0 && len(page) < limit; i-- {
		j := s.jobs.Get(s.jobOrder[i])
		if team != "" && command.TeamOf(j.Team) != team {
			continue
		}
		page = append(page, JobEntry{Seq: j.Seq, Job: s.readJob(j)})
	}
	for team != "" && i >= 0 && command.TeamOf(s.jobs.Get(s.jobOrder[i]).Team) != team {
		i-- // older jobs remain only if one is the team's
	}
	return page, i >= 0
}
