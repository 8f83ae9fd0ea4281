package view

import (
	"slices"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/coordinator/translate"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Task renders a task with its attempts.
func Task(t state.Task) api.Task {
	v := api.Task{
		ID:              t.ID,
		JobID:           t.JobID,
		Index:           t.Index,
		State:           t.State,
		Attempt:         len(t.Attempts),
		AttemptID:       t.AttemptID,
		WorkerID:        t.WorkerID,
		ExitCode:        t.ExitCode,
		Output:          t.Output,
		Artifacts:       translate.TaskArtifactsToAPI(t.Artifacts),
		Checkpoint:      checkpointView(t.Checkpoint),
		Reason:          t.Reason,
		SubmittedBy:     t.SubmittedBy,
		ExecutedBy:      t.ExecutedBy,
		Devices:         t.Devices,
		CancelRequested: t.CancelRequested,
		CreatedAt:       api.FormatTime(t.CreatedAt),
		UpdatedAt:       api.FormatTime(t.UpdatedAt),
	}
	for _, a := range t.Attempts {
		v.Attempts = append(v.Attempts, api.Attempt{
			AttemptID:  a.ID,
			Number:     a.Number,
			WorkerID:   a.WorkerID,
			State:      a.State,
			Devices:    a.Devices,
			AssignedAt: api.FormatTime(a.AssignedAt),
			StartedAt:  api.FormatTime(a.StartedAt),
			EndedAt:    api.FormatTime(a.EndedAt),
			ExitCode:   a.ExitCode,
			Reason:     a.Reason,
			Preflight:  preflightView(a.Preflight),
		})
	}
	return v
}

// Job renders a job with its tasks; its state is derived from theirs and
// it was last updated when it or any of its tasks was.
func Job(r state.JobRecord) api.Job {
	tasks := make([]api.Task, len(r.Tasks))
	updated := r.Job.UpdatedAt
	for i, t := range r.Tasks {
		tasks[i] = Task(t)
		if t.State == api.TaskPending {
			tasks[i].PendingReason = r.PendingReason
		}
		if t.UpdatedAt.After(updated) {
			updated = t.UpdatedAt
		}
	}
	state := jobState(tasks)
	return api.Job{
		JobSpec:   translate.JobSpecToAPI(r.Job.Spec),
		ID:        r.Job.ID,
		State:     state,
		Reason:    jobReason(state, tasks),
		CreatedBy: r.Job.CreatedBy,
		Team:      command.TeamOf(r.Job.Team),
		CreatedAt: api.FormatTime(r.Job.CreatedAt),
		UpdatedAt: api.FormatTime(updated),
		Tasks:     tasks,
	}
}

// jobReason is why a job ended cancelled or failed: the reason of its
// first task that ended so (a dependency that can no longer hold cancels
// every task with one reason naming it); empty otherwise.
func jobReason(state string, tasks []api.Task) string {
	if state != api.TaskCancelled && state != api.TaskFailed {
		return ""
	}
	for _, t := range tasks {
		if t.State == state && t.Reason != "" {
			return t.Reason
		}
	}
	return ""
}

// jobState folds task states into the job's state.
func jobState(tasks []api.Task) string {
	var pending, active, failed, cancelled int
	for _, t := range tasks {
		switch t.State {
		case api.TaskPending:
			pending++
		case api.TaskAssigned, api.TaskRunning:
			active++
		case api.TaskFailed:
			failed++
		case api.TaskCancelled:
			cancelled++
		}
	}
	switch {
	case active > 0 || (pending > 0 && pending < len(tasks)):
		return api.TaskRunning
	case pending > 0:
		return api.TaskPending
	case failed > 0:
		return api.TaskFailed
	case cancelled > 0:
		return api.TaskCancelled
	}
	return api.TaskSucceeded
}

// Assignment renders the acquire answer for an assigned task's current
// attempt.
func Assignment(out state.AssignOutcome) api.Assignment {
	t, spec := out.Task, out.Spec
	var gang *api.GangMember
	if spec.Gang {
		gang = &api.GangMember{Size: spec.Count, Rank: t.Index}
	}
	return api.Assignment{
		Gang:           gang,
		Preflight:      spec.Preflight,
		ID:             t.ID,
		JobID:          t.JobID,
		Index:          t.Index,
		Count:          max(spec.Count, 1),
		AttemptID:      t.AttemptID,
		Attempt:        len(t.Attempts),
		Executor:       spec.Executor,
		Config:         spec.Config,
		Resources:      translate.ResourcesToAPI(spec.Resources),
		Devices:        nonNil(t.Devices),
		LeaseExpiresAt: api.FormatTime(t.LeaseExpiresAt),
		LeaseSeconds:   t.LeaseSeconds,
		TimeoutSeconds: spec.TimeoutSeconds,
		Inputs:         translate.ArtifactRefsToAPI(spec.Inputs),
		Outputs:        slices.Clone(spec.Outputs),

		PreemptionGraceSeconds: spec.PreemptionGrace(),
		Checkpoint:             assignedCheckpoint(t, spec),
	}
}

// assignedCheckpoint is the checkpoint an assignment names: the job's
// path and the task's latest checkpoint, to stage before it starts.
func assignedCheckpoint(t state.Task, spec command.JobSpec) *api.AssignedCheckpoint {
	if spec.Checkpoint == nil {
		return nil
	}
	return &api.AssignedCheckpoint{Path: spec.Checkpoint.Path, Latest: checkpointView(t.Checkpoint)}
}

// nonNil renders a missing list as an empty one.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return slices.Clone(s)
}

// checkpointView is a task's latest checkpoint as clients see it.
func checkpointView(c *state.TaskCheckpoint) *api.TaskCheckpoint {
	if c == nil {
		return nil
	}
	return &api.TaskCheckpoint{SHA256: c.SHA256, Size: c.Size, AttemptID: c.AttemptID, Format: c.Format}
}

// preflightView is an attempt's preflight as clients see it.
func preflightView(p *command.Preflight) *api.PreflightReport {
	if p == nil {
		return nil
	}
	return &api.PreflightReport{Outcome: p.Outcome, DurationMS: p.DurationMS, BoundMS: p.BoundMS, Checks: p.Checks, Skipped: p.Skipped, Failed: p.Failed}
}
