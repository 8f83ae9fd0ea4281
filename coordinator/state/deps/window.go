package deps

import "github.com/gpulayer/gpulayer/coordinator/state/record"

// Parallelism windows. A job with a parallelism below its task count
// (and not a gang, whose members run together) keeps only as many of its
// pending tasks in the queue as it has room for beside its active ones:
// its window, fitted again whenever one of its tasks changes (Settle) and
// at restore. The tasks past the window stay pending, out of the queue,
// like a waiting job's; the matcher never reads them.

// Bounded reports whether j's parallelism may hold tasks out of the
// queue.
func Bounded(j *record.Job) bool {
	p := j.Spec.Parallelism
	return p > 0 && p < max(j.Spec.Count, 1) && !j.Spec.Gang
}

// Enqueue puts j's pending tasks in the queue, or, for a bounded job, as
// many as its window holds.
func (x *Index) Enqueue(t Tables, j *record.Job) {
	if Bounded(j) {
		x.Bound(j.ID)
		x.FitWindow(t, j)
		return
	}
	for _, id := range j.TaskIDs {
		if tk := t.Task(id); tk.State == record.TaskPending {
			t.Push(j, tk)
		}
	}
}

// FitWindow queues a bounded job's oldest pending tasks while it has
// room beside its active ones (none while it waits for a dependency), and
// takes the rest out of the queue.
func (x *Index) FitWindow(t Tables, j *record.Job) {
	if !Bounded(j) {
		return
	}
	room := 0
	if x.Unmet(j.ID) == 0 {
		room = j.Spec.Parallelism - Active(t, j)
	}
	for _, id := range j.TaskIDs { // in index order, which is age order
		tk := t.Task(id)
		if tk.State != record.TaskPending {
			continue
		}
		queued := t.Queued(id)
		switch {
		case room > 0 && !queued:
			t.Push(j, tk)
			room--
		case room > 0:
			room--
		case queued:
			t.Remove(j, tk)
		}
	}
}

// Active counts j's active tasks (assigned or running).
func Active(t Tables, j *record.Job) int {
	n := 0
	for _, id := range j.TaskIDs {
		if t.Task(id).Active() {
			n++
		}
	}
	return n
}

// AtParallelism reports whether j has as many tasks active as its
// parallelism allows.
func AtParallelism(t Tables, j *record.Job) bool {
	p := j.Spec.Parallelism
	return p > 0 && Active(t, j) >= p
}
