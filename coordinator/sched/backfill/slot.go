package backfill

import (
	"cmp"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// End is when a busy device is expected free; Unknown when a task on it
// runs without a timeout.
type End struct {
	At      time.Time
	Unknown bool
}

// EndOf is when t's current attempt is expected to end: its start (or
// assignment) plus its job's timeout_seconds; unknown without one.
func EndOf(t *record.Task, j *record.Job) End {
	a := t.Current()
	if a == nil || j.Spec.TimeoutSeconds <= 0 {
		return End{Unknown: true}
	}
	from := a.StartedAt
	if from.IsZero() {
		from = a.AssignedAt
	}
	return End{At: from.Add(time.Duration(j.Spec.TimeoutSeconds) * time.Second)}
}

// Slot is one place a member of the head could run: a worker, the
// member's number there, its devices and when they are expected free.
type Slot struct {
	Worker  string
	Index   int
	Devices []string
	At      time.Time
	Unknown bool
}

// Compare orders slots as a hold takes them: known ends before unknown,
// earliest first, then by worker and member.
func Compare(a, b Slot) int {
	return cmp.Or(CompareUnknown(a.Unknown, b.Unknown), a.At.Compare(b.At), cmp.Compare(a.Worker, b.Worker), cmp.Compare(a.Index, b.Index))
}

// CompareUnknown orders a known end before an unknown one.
func CompareUnknown(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
