package api

// Job events: GET /v1/jobs/{id}/events answers a job's history as a
// time-ordered list (docs/protocol.md, "Job events").

// Job event kinds.
const (
	EventJobSubmitted     = "job.submitted"
	EventJobWaiting       = "job.waiting"
	EventAttemptAssigned  = "attempt.assigned"
	EventAttemptStarted   = "attempt.started"
	EventAttemptPreempted = "attempt.preempted"
	EventAttemptEnded     = "attempt.ended"
	EventCheckpointSaved  = "checkpoint.saved"
	EventTaskCancelled    = "task.cancelled"
	EventAttemptPreflight = "attempt.preflight"
)

// JobEvent is one fact of a job's history. Kind says which; the fields
// that fact has are set, the others left out.
type JobEvent struct {
	Time string `json:"time"`
	Kind string `json:"kind"`
	// By and Team: who submitted the job, for which team (job.submitted).
	By   string `json:"by,omitempty"`
	Team string `json:"team,omitempty"`
	// TaskID and TaskIndex name the task (every task and attempt event).
	TaskID    string `json:"task_id,omitempty"`
	TaskIndex *int   `json:"task_index,omitempty"`
	// Attempt is the attempt an attempt event is about.
	Attempt *EventAttempt `json:"attempt,omitempty"`
	// PreemptedBy names the task a preemption asked the attempt to stop
	// for (attempt.preempted, and attempt.ended of such an attempt).
	PreemptedBy *Preemptor `json:"preempted_by,omitempty"`
	// Checkpoint is the checkpoint saved (checkpoint.saved): the task's
	// latest, the only one kept.
	Checkpoint *TaskCheckpoint `json:"checkpoint,omitempty"`
	// DependsOn are the conditions the job waits for (job.waiting).
	DependsOn []Dependency `json:"depends_on,omitempty"`
	// Reason says why (task.cancelled).
	Reason string `json:"reason,omitempty"`
	// Preflight is how the attempt's preflight went and how long it took
	// against its bound (attempt.preflight).
	Preflight *PreflightReport `json:"preflight,omitempty"`
}

// EventAttempt is what an attempt event says of its attempt. Outcome,
// ExitCode and Reason are set on attempt.ended.
type EventAttempt struct {
	AttemptID string   `json:"attempt_id"`
	Number    int      `json:"number"`
	WorkerID  string   `json:"worker_id"`
	Devices   []string `json:"devices,omitempty"`
	Outcome   string   `json:"outcome,omitempty"`
	ExitCode  *int     `json:"exit_code,omitempty"`
	Reason    string   `json:"reason,omitempty"`
}

// Preemptor is the job, team and task a preemption was made for.
type Preemptor struct {
	JobID  string `json:"job_id"`
	Team   string `json:"team"`
	TaskID string `json:"task_id"`
}

// JobEvents answers GET /v1/jobs/{id}/events: the job's events, oldest
// first; at most MaxJobEvents, the latest, with Truncated true when
// older ones were left out.
type JobEvents struct {
	JobID     string     `json:"job_id"`
	Events    []JobEvent `json:"events"`
	Truncated bool       `json:"truncated,omitempty"`
}

// MaxJobEvents bounds the events one answer carries.
const MaxJobEvents = 10000
