package deps

import (
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// Tables is what settling dependencies and fitting parallelism windows
// read and change of the state: the jobs and tasks, the pending queue,
// the jobs an apply touched, and what a cancellation or a task newly
// queued causes. The state implements it over its tables, under its
// write lock.
type Tables interface {
	// Job is the job of that id, nil when there is none (collected).
	Job(id string) *record.Job
	// Task is the task of that id.
	Task(id string) *record.Task
	// Own is t to change: t, or a copy put in its place (a capture may
	// hold t). Owning a task touches its job.
	Own(t *record.Task) *record.Task
	// Queued reports whether task id is in the pending queue.
	Queued(id string) bool
	// Push queues t under its job j's key and priority; Remove takes it
	// out.
	Push(j *record.Job, t *record.Task)
	Remove(j *record.Job, t *record.Task)
	// NextTouched takes the next job the apply touched, false when none
	// is left.
	NextTouched() (string, bool)
	// Audit records an audit event.
	Audit(e command.AuditEvent)
	// MarkPending says that work may be placed that could not be before.
	MarkPending()
}

// Terminal reports whether every task of j has ended.
func Terminal(t Tables, j *record.Job) bool {
	for _, id := range j.TaskIDs {
		if !t.Task(id).Terminal() {
			return false
		}
	}
	return true
}

// EndedAt is when an ended job's last task ended (its last change).
func EndedAt(t Tables, j *record.Job) time.Time {
	end := j.UpdatedAt
	for _, id := range j.TaskIDs {
		if tk := t.Task(id); tk.UpdatedAt.After(end) {
			end = tk.UpdatedAt
		}
	}
	return end
}

// JobOutcome is how an ended job ended (Outcome of its tasks' states).
func JobOutcome(t Tables, j *record.Job) string {
	return Outcome(func(yield func(string) bool) {
		for _, id := range j.TaskIDs {
			if !yield(t.Task(id).State) {
				return
			}
		}
	})
}
