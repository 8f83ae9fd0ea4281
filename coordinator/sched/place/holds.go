package place

import (
	"slices"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// Preemption holds. The devices a preemption frees go to the task it was
// made for: the preemption holds them on their worker (Worker.Holds) for
// that task until it is assigned, leaves the queue, or the hold's bound
// passes. Placement gives a held device to no other task
// (HeldFromOthers): a match passes such a task over, and an assignment
// naming one is refused. A hold is read against the time of the command
// that reads it, so every replica judges it alike.

// Records is what reading a hold needs: the tasks and their jobs.
type Records interface {
	// Task is the task of that id, or nil.
	Task(id string) *record.Task
	// Job is the job of that id, or nil.
	Job(id string) *record.Job
}

// HoldLive reports whether h still holds its device at now (a zero now,
// a match made with no time: until it is released): its bound has not
// passed and its task still waits.
func HoldLive(v Records, h record.DeviceHold, now time.Time) bool {
	if !now.IsZero() && !h.Until.After(now) {
		return false
	}
	t := v.Task(h.TaskID)
	return t != nil && t.State == record.TaskPending
}

// HeldFromOthers reports whether any of devs is held on w, at now, for a
// task other than taskID (a hold for a gang member holds for its whole
// gang: a gang's preemption holds devices for the gang).
func HeldFromOthers(v Records, w *record.Worker, devs []string, taskID string, now time.Time) bool {
	for _, h := range w.Holds {
		if !sameHolder(v, h.TaskID, taskID) && slices.Contains(devs, h.Device) && HoldLive(v, h, now) {
			return true
		}
	}
	return false
}

// sameHolder reports whether a hold for task a holds for task b: the
// same task, or members of one gang.
func sameHolder(v Records, a, b string) bool {
	if a == b {
		return true
	}
	ta, tb := v.Task(a), v.Task(b)
	return ta != nil && tb != nil && ta.JobID == tb.JobID && v.Job(ta.JobID).Spec.Gang
}

// HoldsFor reports whether w holds a device, at now, for taskID.
func HoldsFor(v Records, w *record.Worker, taskID string, now time.Time) bool {
	for _, h := range w.Holds {
		if h.TaskID == taskID && HoldLive(v, h, now) {
			return true
		}
	}
	return false
}
