package view

import (
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// LogEntry renders one stored chunk of a job's output.
func LogEntry(l state.LogLine) api.LogEntry {
	return api.LogEntry{TaskID: l.TaskID, Index: l.TaskIndex, Attempt: l.Attempt, Stream: l.Stream, Seq: l.Seq, Data: l.Data, Time: api.FormatTime(l.Time)}
}
