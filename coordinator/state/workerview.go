package state

import (
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/place"
)

// Worker views. A match reads the same facts about a worker's devices
// again and again: which are offered (health, approval, identity, cordon,
// MIG layout), which its active tasks hold whole or by a share and until
// about when, and what is free. A view derives them once per worker and
// keeps them until they may change:
//
//   - the worker's active tasks change (an assignment, a start, an
//     attempt's end): the view of that worker is dropped
//     (derived.Cache.DropView, at the points that change Worker.Hold,
//     Worker.Release and the expected ends);
//   - any command other than the task commands below is applied: every
//     view is dropped, and none is kept while the command applies, since
//     such a command may change a worker's record (its devices, approval,
//     cordons, status) in place;
//   - a restore: every view is dropped.
//
// A view is a function of the replicated state alone, built lazily from
// it and kept in package derived, so a replica restored from a snapshot
// and one that replayed the log read the same views; it is never encoded.

// viewSafe are the commands that change a worker only through its active
// tasks (each such change drops that worker's view, derived.Cache.DropView):
// the commands of the scheduling hot path.
var viewSafe = map[command.Type]bool{
	command.TypeSubmitJob:   true,
	command.TypeAssignTask:  true,
	command.TypeAssignGang:  true,
	command.TypeStartTask:   true,
	command.TypeAppendLogs:  true,
	command.TypeFinishTask:  true,
	command.TypeAppendAudit: true,
}

// buildView derives w's view from the state (place.NewWorkerView).
func (s *Store) buildView(w *Worker) *place.WorkerView {
	return place.NewWorkerView(w, s.holding, s.inuse.endOf)
}

// holding is an active task as placement reads it: the task and its job.
func (s *Store) holding(taskID string) place.Holding {
	t := s.tasks.Get(taskID)
	return place.Holding{Task: t, Job: s.jobs.Get(t.JobID)}
}
