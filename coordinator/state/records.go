package state

import "github.com/gpulayer/gpulayer/coordinator/state/record"

// The records of the state's large tables live in package record; the
// state's readers name them through these aliases.
type (
	Worker         = record.Worker
	Attempt        = record.Attempt
	Preemptor      = record.Preemptor
	Endpoint       = record.Endpoint
	Job            = record.Job
	Task           = record.Task
	Submission     = record.Submission
	LastAcquire    = record.LastAcquire
	TaskAttempt    = record.TaskAttempt
	TaskCheckpoint = record.TaskCheckpoint
	MIGLayout      = record.MIGLayout
	DeviceHold     = record.DeviceHold
	MeterShare     = record.MeterShare
)

// MaxLogBytesPerTask bounds the output kept for one task; past it, chunks
// are dropped and one marker is stored.
const MaxLogBytesPerTask = 8 << 20
