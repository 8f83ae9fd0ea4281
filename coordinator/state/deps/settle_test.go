package deps

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

var t0 = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)

// tables is Tables over maps: a queue as a set, the touched jobs as a
// list, what was audited and how often placement was told.
type tables struct {
	jobs    map[string]*record.Job
	tasks   map[string]*record.Task
	queued  map[string]bool
	touched []string
	audits  []string
	pending int
}

func newTables() *tables {
	return &tables{jobs: map[string]*record.Job{}, tasks: map[string]*record.Task{}, queued: map[string]bool{}}
}

// job adds job id of count pending tasks, depending on deps, at most
// parallelism active (0: no bound).
func (t *tables) job(id string, count, parallelism int, deps ...command.Dependency) *record.Job {
	j := &record.Job{ID: id, Spec: command.JobSpec{Count: count, Parallelism: parallelism, DependsOn: deps}}
	for i := range count {
		tk := &record.Task{ID: fmt.Sprintf("%s-%d", id, i), JobID: id, State: record.TaskPending}
		j.TaskIDs = append(j.TaskIDs, tk.ID)
		t.tasks[tk.ID] = tk
	}
	t.jobs[id] = j
	return j
}

// end ends every task of job id in state, touching it.
func (t *tables) end(id, state string) {
	for _, tid := range t.jobs[id].TaskIDs {
		tk := t.Own(t.tasks[tid])
		tk.State, tk.UpdatedAt = state, t0
		delete(t.queued, tid)
	}
}

func (t *tables) Job(id string) *record.Job   { return t.jobs[id] }
func (t *tables) Task(id string) *record.Task { return t.tasks[id] }
func (t *tables) Own(tk *record.Task) *record.Task {
	t.touched = append(t.touched, tk.JobID)
	return tk
}
func (t *tables) Queued(id string) bool                 { return t.queued[id] }
func (t *tables) Push(_ *record.Job, tk *record.Task)   { t.queued[tk.ID] = true }
func (t *tables) Remove(_ *record.Job, tk *record.Task) { delete(t.queued, tk.ID) }
func (t *tables) Audit(e command.AuditEvent)            { t.audits = append(t.audits, e.Kind+" "+e.Subject) }
func (t *tables) MarkPending()                          { t.pending++ }
func (t *tables) NextTouched() (string, bool) {
	if len(t.touched) == 0 {
		return "", false
	}
	id := t.touched[0]
	t.touched = t.touched[1:]
	return id, true
}

// queuedOf is job id's queued tasks, in order.
func (t *tables) queuedOf(id string) []string {
	var out []string
	for _, tid := range t.jobs[id].TaskIDs {
		if t.queued[tid] {
			out = append(out, tid)
		}
	}
	return out
}

// A chain: b waits for a to succeed, c for b to end whatever the outcome.
// a failing cancels b, which ends b, which admits c, all in one Settle.
func TestSettleFollowsTheChain(t *testing.T) {
	tb, x := newTables(), New()
	for _, j := range []*record.Job{
		tb.job("a", 1, 0),
		tb.job("b", 2, 0, command.Dependency{Job: "a", Condition: command.DependSucceeded}),
		tb.job("c", 1, 0, command.Dependency{Job: "b", Condition: command.DependFinished}),
	} {
		x.Admit(tb, j, t0)
	}
	if !slices.Equal(tb.queuedOf("a"), []string{"a-0"}) || len(tb.queuedOf("b"))+len(tb.queuedOf("c")) != 0 || x.Unmet("b") != 1 || x.Unmet("c") != 1 {
		t.Fatalf("admitted: a %v, b %v, c %v; unmet b %d c %d", tb.queuedOf("a"), tb.queuedOf("b"), tb.queuedOf("c"), x.Unmet("b"), x.Unmet("c"))
	}
	if why := x.WaitingFor(tb, tb.jobs["b"]); why != "waits for job a to end (succeeded)" {
		t.Fatalf("b waits: %q", why)
	}
	tb.end("a", record.TaskFailed)
	x.Settle(tb)
	if tb.tasks["b-0"].State != record.TaskCancelled || tb.tasks["b-1"].State != record.TaskCancelled || x.Unmet("b") != 0 {
		t.Fatalf("b after a failed: %s %s, unmet %d", tb.tasks["b-0"].State, tb.tasks["b-1"].State, x.Unmet("b"))
	}
	if !slices.Equal(tb.queuedOf("c"), []string{"c-0"}) || x.Unmet("c") != 0 || tb.pending != 1 {
		t.Fatalf("c after b was cancelled: queued %v, unmet %d, pending told %d", tb.queuedOf("c"), x.Unmet("c"), tb.pending)
	}
	if !slices.Equal(tb.audits, []string{"job.cancelled b"}) {
		t.Fatalf("audited %v", tb.audits)
	}
}

// A job whose dependency already ended the wrong way is cancelled at
// admission; one whose dependency is gone (collected after it ended) is
// queued.
func TestAdmitAJobWhoseDependencyEnded(t *testing.T) {
	tb, x := newTables(), New()
	tb.job("a", 1, 0)
	tb.end("a", record.TaskSucceeded)
	x.Admit(tb, tb.job("f", 1, 0, command.Dependency{Job: "a", Condition: command.DependFailed}), t0)
	if tb.tasks["f-0"].State != record.TaskCancelled || !slices.Equal(tb.audits, []string{"job.cancelled f"}) {
		t.Fatalf("f: %s, audited %v", tb.tasks["f-0"].State, tb.audits)
	}
	x.Admit(tb, tb.job("g", 1, 0, command.Dependency{Job: "gone", Condition: command.DependFinished}), t0)
	if !slices.Equal(tb.queuedOf("g"), []string{"g-0"}) {
		t.Fatalf("g queued %v", tb.queuedOf("g"))
	}
}

// A bounded job keeps its window in the queue: as many of its oldest
// pending tasks as it has room for beside its active ones, refitted as
// they change; Rebuild fits it again from the tables alone.
func TestWindows(t *testing.T) {
	tb, x := newTables(), New()
	j := tb.job("w", 4, 2)
	x.Admit(tb, j, t0)
	if !slices.Equal(tb.queuedOf("w"), []string{"w-0", "w-1"}) {
		t.Fatalf("window %v, want w-0 w-1", tb.queuedOf("w"))
	}
	tb.tasks["w-0"].State = record.TaskRunning // assigned: one room left
	delete(tb.queued, "w-0")
	tb.touched = append(tb.touched, "w")
	x.Settle(tb)
	if !slices.Equal(tb.queuedOf("w"), []string{"w-1"}) || AtParallelism(tb, j) {
		t.Fatalf("window with one running %v", tb.queuedOf("w"))
	}
	tb.tasks["w-1"].State = record.TaskRunning
	delete(tb.queued, "w-1")
	if !AtParallelism(tb, j) {
		t.Fatal("two of two running: not at its parallelism")
	}
	tb.tasks["w-0"].State = record.TaskSucceeded
	tb.touched = append(tb.touched, "w")
	x.Settle(tb)
	if !slices.Equal(tb.queuedOf("w"), []string{"w-2"}) {
		t.Fatalf("window after one ended %v, want w-2", tb.queuedOf("w"))
	}
	clear(tb.queued) // a restore: the queue holds every pending task
	for _, id := range j.TaskIDs {
		if tb.tasks[id].State == record.TaskPending {
			tb.queued[id] = true
		}
	}
	if y := Rebuild(tb, []string{"w"}); !slices.Equal(tb.queuedOf("w"), []string{"w-2"}) || !slices.Contains(slices.Collect(y.Held()), "w") {
		t.Fatalf("after Rebuild: window %v", tb.queuedOf("w"))
	}
	y := Rebuild(tb, []string{"w"})
	held := 0
	y.HeldTasks(tb, func(_ *record.Job, n int) { held += n })
	if held != 1 {
		t.Fatalf("held out of the queue %d, want 1 (w-3)", held)
	}
}

// A restore takes a waiting job's pending tasks out of the queue, and
// its waiters settle as before: a job waiting for two is queued only
// once both have ended as it asks.
func TestRebuildKeepsWaitersOut(t *testing.T) {
	tb := newTables()
	tb.job("a", 1, 0)
	tb.job("b", 1, 0)
	tb.job("c", 2, 0, command.Dependency{Job: "a", Condition: command.DependSucceeded}, command.Dependency{Job: "b", Condition: command.DependFinished})
	for id := range tb.tasks { // a restore: the queue holds every pending task
		tb.queued[id] = true
	}
	x := Rebuild(tb, []string{"a", "b", "c"})
	if len(tb.queuedOf("c")) != 0 || x.Unmet("c") != 2 {
		t.Fatalf("after Rebuild c is queued %v, unmet %d; want out of the queue, 2", tb.queuedOf("c"), x.Unmet("c"))
	}
	held := 0
	x.HeldTasks(tb, func(j *record.Job, n int) { held += n })
	if held != 2 {
		t.Fatalf("held %d, want c's 2", held)
	}
	tb.end("a", record.TaskSucceeded)
	x.Settle(tb)
	if len(tb.queuedOf("c")) != 0 || x.Unmet("c") != 1 {
		t.Fatalf("one of two met: c queued %v, unmet %d", tb.queuedOf("c"), x.Unmet("c"))
	}
	tb.end("b", record.TaskCancelled)
	x.Settle(tb)
	if !slices.Equal(tb.queuedOf("c"), []string{"c-0", "c-1"}) || x.Unmet("c") != 0 {
		t.Fatalf("both met: c queued %v, unmet %d", tb.queuedOf("c"), x.Unmet("c"))
	}
}

// At admission a dependency that ended the wrong way cancels the job
// even while another is still open, and the audit says why; a job both
// bounded and waiting queues nothing until it is met, then its window.
func TestAdmitBrokenFirstAndBoundedWaiters(t *testing.T) {
	tb, x := newTables(), New()
	tb.job("open", 1, 0)
	tb.job("done", 1, 0)
	tb.end("done", record.TaskSucceeded)
	var audited []command.AuditEvent
	rec := &recorder{tables: tb, events: &audited}
	x.Admit(rec, tb.job("b", 1, 0,
		command.Dependency{Job: "open", Condition: command.DependFinished},
		command.Dependency{Job: "done", Condition: command.DependFailed}), t0)
	if tb.tasks["b-0"].State != record.TaskCancelled || x.Unmet("b") != 0 {
		t.Fatalf("b: %s, unmet %d; want cancelled at once", tb.tasks["b-0"].State, x.Unmet("b"))
	}
	if len(audited) != 1 || audited[0].Actor != Actor || audited[0].Detail == "" || tb.tasks["b-0"].Reason != audited[0].Detail {
		t.Fatalf("audited %+v, the task's reason %q", audited, tb.tasks["b-0"].Reason)
	}
	w := tb.job("w", 4, 2, command.Dependency{Job: "open", Condition: command.DependSucceeded})
	x.Admit(tb, w, t0)
	if len(tb.queuedOf("w")) != 0 || x.Unmet("w") != 1 {
		t.Fatalf("a bounded waiter queued %v", tb.queuedOf("w"))
	}
	tb.end("open", record.TaskSucceeded)
	x.Settle(tb)
	if !slices.Equal(tb.queuedOf("w"), []string{"w-0", "w-1"}) {
		t.Fatalf("met: window %v, want w-0 w-1", tb.queuedOf("w"))
	}
}

// recorder is tables that keep the whole audit events.
type recorder struct {
	*tables
	events *[]command.AuditEvent
}

func (r *recorder) Audit(e command.AuditEvent) {
	*r.events = append(*r.events, e)
	r.tables.Audit(e)
}
