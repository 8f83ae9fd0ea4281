package view

import (
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/jobhistory"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// eventKinds are the wire words of the state's job event kinds.
var eventKinds = map[jobhistory.JobEventKind]string{
	jobhistory.JobSubmitted:            api.EventJobSubmitted,
	jobhistory.JobWaitsForDependencies: api.EventJobWaiting,
	jobhistory.AttemptAssigned:         api.EventAttemptAssigned,
	jobhistory.AttemptStarted:          api.EventAttemptStarted,
	jobhistory.AttemptPreemptionAsked:  api.EventAttemptPreempted,
	jobhistory.AttemptEnded:            api.EventAttemptEnded,
	jobhistory.CheckpointSaved:         api.EventCheckpointSaved,
	jobhistory.TaskCancelled:           api.EventTaskCancelled,
	jobhistory.AttemptPreflight:        api.EventAttemptPreflight,
}

// JobEvents renders a job's events.
func JobEvents(jobID string, evs []jobhistory.JobEvent, truncated bool) api.JobEvents {
	out := api.JobEvents{JobID: jobID, Events: make([]api.JobEvent, 0, len(evs)), Truncated: truncated}
	for _, e := range evs {
		out.Events = append(out.Events, jobEvent(e))
	}
	return out
}

func jobEvent(e jobhistory.JobEvent) api.JobEvent {
	v := api.JobEvent{Time: api.FormatTime(e.At), Kind: eventKinds[e.Kind], By: e.By, Team: e.Team, TaskID: e.TaskID,
		Checkpoint: checkpointView(e.Checkpoint), Reason: e.Reason}
	if e.TaskID != "" {
		i := e.TaskIndex
		v.TaskIndex = &i
	}
	for _, d := range e.DependsOn {
		v.DependsOn = append(v.DependsOn, api.Dependency(d))
	}
	a := e.Attempt
	if a == nil {
		return v
	}
	v.Attempt = &api.EventAttempt{AttemptID: a.ID, Number: a.Number, WorkerID: a.WorkerID, Devices: a.Devices}
	if e.Kind == jobhistory.AttemptPreflight {
		v.Preflight = preflightView(a.Preflight)
	}
	if e.Kind == jobhistory.AttemptEnded {
		v.Attempt.Outcome, v.Attempt.ExitCode, v.Attempt.Reason = a.State, a.ExitCode, a.Reason
	}
	if p := a.PreemptedBy; p != nil && (e.Kind == jobhistory.AttemptPreemptionAsked || e.Kind == jobhistory.AttemptEnded) {
		v.PreemptedBy = &api.Preemptor{JobID: p.JobID, Team: command.TeamOf(p.Team), TaskID: p.TaskID}
	}
	return v
}
