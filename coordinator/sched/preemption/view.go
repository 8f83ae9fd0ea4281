package preemption

import (
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// View is what a preemption decision reads of the replicated state. The
// store gives one under its lock (its read lock to plan, its write lock
// to check a command as it applies), so a decision sees one state.
type View interface {
	// Workers lists every worker, by id.
	Workers() []*record.Worker
	// Worker is the worker of that id, nil if none.
	Worker(id string) *record.Worker
	// Job is the job of that id, nil if none.
	Job(id string) *record.Job
	// Task is the task of that id, nil if none.
	Task(id string) *record.Task
	// CanRun checks everything of placing t (of job j) on w, narrowed to
	// capability when it is not empty, but the availability of its
	// devices: the worker's status, executor, capability, targets,
	// affinity and per-worker limits.
	CanRun(w *record.Worker, j *record.Job, t *record.Task, capability string) error
	// FreeDevices lists w's offered devices no active task holds, whole
	// or by a share; the caller must not change the slice.
	FreeDevices(w *record.Worker) []command.Device
	// DeviceUse says which of w's devices its active tasks, but those
	// in gone, hold whole, and how much memory (MiB) they hold of each
	// shared one.
	DeviceUse(w *record.Worker, gone map[string]bool) (whole map[string]bool, shared map[string]uint64)
	// HeldFromOthers reports whether any of devs is held on w, at now,
	// by a live preemption hold for a task other than taskID (and not of
	// its gang).
	HeldFromOthers(w *record.Worker, devs []string, taskID string, now time.Time) bool
	// InUse is what team's active tasks hold, in hundredths of a GPU.
	InUse(team string) int64
	// Quota is team's guaranteed quota in hundredths of a GPU (none for
	// a team that is gone).
	Quota(team string) int64
	// RoomFor reports whether team, holding use, has room for need more
	// hundredths of a GPU for a task that is preemptible or not.
	RoomFor(team string, use, need int64, preemptible bool) bool
}
