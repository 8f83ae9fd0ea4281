package deps

import (
	"fmt"
	"slices"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// Settling. A job that waits for others keeps its tasks pending but out
// of the pending queue, so placement never reads them. When a waited-on
// job ends, the same apply settles each job that waits for it: the
// condition holds (one dependency fewer; at none, its tasks join the
// queue, or its window) or can no longer hold (the job is cancelled,
// naming the dependency, which may in turn settle the jobs that wait for
// it). Nothing is timed: replicas settle the same jobs at the same entry.
//
// Only jobs that have not ended are waited for: an ending job settles its
// dependents at once, so garbage collection, which removes ended jobs
// only, never removes a job another still waits for. A dependency on a
// job already removed is refused at submit (not found).

// Actor is the actor of the audit event of a job cancelled because a
// dependency can no longer be met.
const Actor = "coordinator"

// unmet counts j's dependencies on jobs that have not ended, and names
// the first that ended so that its condition can no longer hold.
func unmet(t Tables, j *record.Job) (n int, broken string) {
	for _, d := range j.Spec.DependsOn {
		dj := t.Job(d.Job)
		if dj == nil {
			continue // removed after it ended, which settled j then
		}
		if !Terminal(t, dj) {
			n++
			continue
		}
		if out := JobOutcome(t, dj); !Holds(d.Condition, out) && broken == "" {
			broken = Broken(d, out)
		}
	}
	return n, broken
}

// Admit takes a new job, once its tasks exist: it waits (its tasks stay
// out of the queue), is cancelled at once when a dependency has already
// ended the wrong way, or its pending tasks join the queue (or its
// window, Enqueue).
func (x *Index) Admit(t Tables, j *record.Job, now time.Time) {
	if len(j.Spec.DependsOn) > 0 {
		n, broken := unmet(t, j)
		if broken != "" {
			x.cancel(t, j, broken, now)
			return
		}
		if n > 0 {
			x.wait(t, j, n)
			return
		}
	}
	x.Enqueue(t, j)
}

// wait records that j waits for n jobs that have not ended.
func (x *Index) wait(t Tables, j *record.Job, n int) {
	var open []string
	for _, d := range j.Spec.DependsOn {
		if dj := t.Job(d.Job); dj != nil && !Terminal(t, dj) {
			open = append(open, d.Job)
		}
	}
	x.Wait(j.ID, n, open)
}

// cancel ends every task of a job that waits for a dependency (all
// pending, none queued) as cancelled for reason.
func (x *Index) cancel(t Tables, j *record.Job, reason string, now time.Time) {
	for _, id := range j.TaskIDs {
		tk := t.Own(t.Task(id))
		if tk.Terminal() {
			continue
		}
		tk.State = record.TaskCancelled
		tk.Reason = reason
		tk.UpdatedAt = now
	}
	x.Stop(j.ID)
	t.Audit(command.AuditEvent{Time: now, Kind: "job.cancelled", Actor: Actor, Subject: j.ID, Team: command.TeamOf(j.Team), Detail: reason})
}

// Settle runs at the end of each applied command: for each job whose
// task changed (Tables.NextTouched) it fits a bounded job's window, and
// for one that has ended and is waited for it settles the jobs that wait
// for it, and so on down the chain (each cancelled job is touched in
// turn). The cost is the dependents of the jobs that ended, and one pass
// over the tasks of each bounded job touched.
func (x *Index) Settle(t Tables) {
	var seen map[string]bool // most applies touch one job
	for {
		id, ok := t.NextTouched()
		if !ok {
			return
		}
		j := t.Job(id)
		if j == nil {
			continue
		}
		if Bounded(j) && !seen[id] { // once: the apply's changes are all made
			if seen == nil {
				seen = map[string]bool{}
			}
			seen[id] = true
			x.FitWindow(t, j)
		}
		ended := Terminal(t, j)
		if x.Tracked(id) && ended {
			x.Ended(id) // cancelled while it waited, or past its window
		}
		if !ended {
			continue
		}
		waiters := x.TakeDependents(id)
		if len(waiters) == 0 {
			continue
		}
		outcome, now := JobOutcome(t, j), EndedAt(t, j)
		for _, wid := range waiters {
			x.settleOne(t, wid, id, outcome, now)
		}
	}
}

// settleOne settles waiter's dependency on ended, which ended outcome.
func (x *Index) settleOne(t Tables, waiter, ended, outcome string, now time.Time) {
	if x.Unmet(waiter) == 0 {
		return // cancelled since, or already settled
	}
	w := t.Job(waiter)
	if w == nil || Terminal(t, w) {
		x.Stop(waiter) // cancelled while it waited (and maybe collected since)
		return
	}
	i := slices.IndexFunc(w.Spec.DependsOn, func(d command.Dependency) bool { return d.Job == ended })
	if i < 0 {
		return
	}
	d := w.Spec.DependsOn[i]
	if !Holds(d.Condition, outcome) {
		x.cancel(t, w, Broken(d, outcome), now) // touches w: its own waiters settle next
		return
	}
	if x.Met(waiter) > 0 {
		return
	}
	x.Enqueue(t, w)
	t.MarkPending()
}

// WaitingFor names, for a pending reason, a dependency j still waits
// for, or "".
func (x *Index) WaitingFor(t Tables, j *record.Job) string {
	if x.Unmet(j.ID) == 0 {
		return ""
	}
	for _, d := range j.Spec.DependsOn {
		if dj := t.Job(d.Job); dj != nil && !Terminal(t, dj) {
			return fmt.Sprintf("waits for job %s to end (%s)", d.Job, d.Condition)
		}
	}
	return ""
}

// Rebuild derives the index from the jobs (order: every job, oldest
// first) and their tasks after a restore, takes the tasks of waiting jobs
// out of the queue, and fits every bounded job's window.
func Rebuild(t Tables, order []string) *Index {
	x := New()
	for _, id := range order {
		j := t.Job(id)
		if Terminal(t, j) {
			continue
		}
		if Bounded(j) {
			x.Bound(j.ID)
		}
		if len(j.Spec.DependsOn) == 0 {
			continue
		}
		n, _ := unmet(t, j)
		if n == 0 {
			continue
		}
		x.wait(t, j, n)
		for _, tid := range j.TaskIDs {
			if tk := t.Task(tid); tk.State == record.TaskPending {
				t.Remove(j, tk)
			}
		}
	}
	for _, id := range order {
		x.FitWindow(t, t.Job(id))
	}
	return x
}

// HeldTasks calls f for each job that holds pending tasks out of the
// queue (waiting for a dependency, or past its parallelism window) with
// how many it holds. It reads only the waiting and bounded jobs.
func (x *Index) HeldTasks(t Tables, f func(j *record.Job, held int)) {
	for id := range x.Held() {
		j := t.Job(id)
		if j == nil {
			continue
		}
		n := 0
		for _, tid := range j.TaskIDs {
			if !t.Queued(tid) && t.Task(tid).State == record.TaskPending {
				n++
			}
		}
		if n > 0 {
			f(j, n)
		}
	}
}
