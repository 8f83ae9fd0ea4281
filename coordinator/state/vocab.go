package state

import (
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/fleetctl"
	"github.com/gpulayer/gpulayer/coordinator/state/groups"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// The words the state records in its tables, its log entries' outcomes
// and its audit events. They are the protocol's words (vocab_test.go
// checks each against sdk/api), kept here so that the state machine
// depends on no wire package.
const (
	taskPending      = record.TaskPending
	taskAssigned     = record.TaskAssigned
	taskRunning      = record.TaskRunning
	taskSucceeded    = record.TaskSucceeded
	taskFailed       = record.TaskFailed
	taskCancelled    = record.TaskCancelled
	attemptLost      = record.AttemptLost
	attemptPreempted = record.AttemptPreempted

	workerPending  = record.WorkerPending
	workerReady    = record.WorkerReady
	workerOffline  = record.WorkerOffline
	workerRevoked  = record.WorkerRevoked
	workerDraining = record.WorkerDraining
	workerStopping = record.WorkerStopping
	// drainedBySelf is the DrainedBy of a drain the worker's agent asked for.
	drainedBySelf = fleetctl.DrainedBySelf

	// A group member and a job's target name a worker or a group.
	memberWorker = groups.KindWorker
	memberGroup  = groups.KindGroup
	targetWorker = memberWorker
	targetGroup  = memberGroup

	originJoin       = "join"
	originProvider   = "provider"
	originEnrollment = "enrollment"

	// Error codes an audit event of a refused enrollment carries.
	codeConflict          = "conflict"
	codeEnrollmentRefused = "enrollment_refused"
)

// timeFormat is the protocol's timestamp layout, for audit details.
const timeFormat = command.TimeLayout

// The worker statuses, for readers of the state that act on them
// (heartbeat, authentication).
const (
	WorkerPending  = workerPending
	WorkerRevoked  = workerRevoked
	WorkerReady    = workerReady
	WorkerOffline  = workerOffline
	WorkerDraining = workerDraining
	WorkerStopping = workerStopping
)
