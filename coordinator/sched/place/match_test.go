package place

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/backfill"
	"github.com/gpulayer/gpulayer/coordinator/state/pending"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
	"github.com/gpulayer/gpulayer/coordinator/state/teams"
)

// queued is a MatchView over a fleet and a real pending index: teams
// read in the order given, and a team in full takes nothing that asks
// for GPUs.
type queued struct {
	*fleet
	jobs  map[string]*record.Job
	tasks map[string]*record.Task
	queue *pending.Queue
	order []string
	full  map[string]bool
	seq   uint64
}

func newQueued() *queued {
	return &queued{fleet: newFleet(), jobs: map[string]*record.Job{}, tasks: map[string]*record.Task{},
		queue: pending.New(), full: map[string]bool{}}
}

// submit queues a one-task job of team asking gpus at priority.
func (q *queued) submit(id, team string, gpus, priority int) *record.Task {
	r := &command.Resources{GPUs: gpus}
	j := &record.Job{ID: id, Team: team, Spec: command.JobSpec{Executor: "exec", Count: 1, Priority: priority, Resources: r}, TaskIDs: []string{id + "-0"}}
	q.seq++
	t := &record.Task{ID: id + "-0", JobID: id, State: record.TaskPending, Seq: q.seq}
	q.jobs[id], q.tasks[t.ID] = j, t
	q.queue.Push(pending.Key{Executor: "exec", Team: team, Size: gpus, Res: *r}, priority, t)
	return t
}

func (q *queued) Worker(id string) *record.Worker { return q.workers[id] }
func (q *queued) Job(id string) *record.Job       { return q.jobs[id] }
func (q *queued) Task(id string) *record.Task     { return q.tasks[id] }
func (q *queued) Queue() *pending.Queue           { return q.queue }
func (q *queued) TeamOrder() []string             { return q.order }
func (q *queued) Targets(*record.Worker) []string { return []string{""} }
func (q *queued) Hold(time.Time) *backfill.Hold   { return nil }
func (q *queued) AtParallelism(*record.Job) bool  { return false }
func (q *queued) InUse(string) int64              { return 0 }

// Limits bounds a team in full at nothing; the others have no bound.
func (q *queued) Limits(team string) teams.Limits {
	return teams.Limits{Name: team, Bounded: q.full[team], Weight: 100}
}

var _ MatchView = (*queued)(nil)

func TestMatchReadsTeamsInOrder(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name     string
		setup    func(q *queued)
		want     string
		retry    time.Time
		examined int
	}{
		{"the first team in the order, whatever the priorities", func(q *queued) {
			q.submit("a", "ml", 1, 9)
			q.submit("b", "research", 1, 0)
			q.order = []string{"research", "ml"}
		}, "b-0", time.Time{}, 1},
		{"within a team, priority then age", func(q *queued) {
			q.submit("old", "ml", 1, 0)
			q.submit("high", "ml", 1, 5)
			q.order = []string{"ml"}
		}, "high-0", time.Time{}, 1},
		{"a team at its ceiling is passed over", func(q *queued) {
			q.submit("a", "ml", 1, 0)
			q.submit("b", "research", 1, 0)
			q.order = []string{"research", "ml"}
			q.full["research"] = true
		}, "a-0", time.Time{}, 1},
		{"too wide for the worker's free GPUs: not read", func(q *queued) {
			q.submit("wide", "ml", 4, 9)
			q.submit("narrow", "ml", 1, 0)
			q.order = []string{"ml"}
		}, "narrow-0", time.Time{}, 1},
		{"a task another worker suits better waits, and says until when", func(q *queued) {
			q.submit("soft", "ml", 1, 0).UpdatedAt = now.Add(-time.Second)
			q.jobs["soft"].SetRules([]command.AffinityRule{{Label: "zone", Value: "a", Weight: 10}})
			o := q.worker("w2", 2, 2, 0, 0)
			o.Capabilities, o.Labels = []string{"*"}, map[string]string{"zone": "a"}
			q.order = []string{"ml"}
		}, "", now.Add(AffinityWait - time.Second), 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := newQueued()
			w := q.worker("w1", 2, 2, 0, 0)
			w.Capabilities = []string{"*"}
			c.setup(q)
			f := Match(q, w, "", 0, nil, now)
			got := ""
			if f.Task != nil {
				got = f.Task.ID
			}
			if got != c.want || !f.RetryAt.Equal(c.retry) || f.Examined != c.examined {
				t.Fatalf("matched %q (retry %v, examined %d), want %q (retry %v, examined %d)", got, f.RetryAt, f.Examined, c.want, c.retry, c.examined)
			}
			if got != "" && fmt.Sprint(f.Devices) != "[GPU-w1-0]" {
				t.Fatalf("devices %v, want [GPU-w1-0]", f.Devices)
			}
		})
	}
}

// A task a concurrent acquire is handing out is skipped, not taken twice.
func TestMatchSkips(t *testing.T) {
	q := newQueued()
	w := q.worker("w1", 2, 2, 0, 0)
	w.Capabilities = []string{"*"}
	q.submit("a", "ml", 1, 5)
	q.submit("b", "ml", 1, 0)
	q.order = []string{"ml"}
	if f := Match(q, w, "", 0, map[string]bool{"a-0": true}, time.Time{}); f.Task == nil || f.Task.ID != "b-0" {
		t.Fatalf("matched %v, want b-0 past the skipped a-0", f.Task)
	}
	w.Capabilities = nil
	if f := Match(q, w, "", 0, nil, time.Time{}); f.Task != nil || f.Examined != 0 {
		t.Fatalf("a worker accepting no capability matched %v after %d tasks, want none after none", f.Task, f.Examined)
	}
}

func (q *queued) GroupExists(string) bool       { return false }
func (q *queued) WaitingFor(*record.Job) string { return "" }

var _ WhyView = (*queued)(nil)

// Why names what is missing, first what no live worker offers, then what
// holds the task back in the queue; a task that waits only for room
// says nothing.
func TestWhyNamesWhatIsMissing(t *testing.T) {
	cases := []struct {
		name  string
		setup func(q *queued, j *record.Job)
		want  string
	}{
		{"no worker", func(q *queued, _ *record.Job) { delete(q.workers, "w1") }, "no live worker: no worker is registered"},
		{"the worker is draining", func(q *queued, _ *record.Job) { q.workers["w1"].Status = record.WorkerDraining },
			"no live worker: 1 draining"},
		{"a target that is not registered", func(_ *queued, j *record.Job) {
			j.Spec.Target = &command.Target{Kind: command.TargetWorker, ID: "gone"}
		}, "target worker gone is not registered"},
		{"an executor no one runs", func(_ *queued, j *record.Job) { j.Spec.Executor = "container" },
			`no live worker offers executor "container"`},
		{"at its team's ceiling", func(q *queued, _ *record.Job) { q.full["ml"] = true }, "team ml at its quota"},
		{"only room", func(*queued, *record.Job) {}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := newQueued()
			q.worker("w1", 2, 2, 0, 0).Capabilities = []string{"*"}
			q.submit("a", "ml", 1, 0)
			j := q.jobs["a"]
			c.setup(q, j)
			got := Why(q, j)
			if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
				t.Fatalf("Why = %q, want one containing %q", got, c.want)
			}
		})
	}
}
