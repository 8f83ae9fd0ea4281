package preemption

import (
	"iter"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/state/pending"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// queued is a CandidateView: a fleet whose pending tasks are in a real
// pending index.
type queued struct {
	*fleet
	queue   *pending.Queue
	waiting map[string]bool // jobs waiting for a dependency
	seq     uint64
}

func newQueued() *queued {
	return &queued{fleet: newFleet(), queue: pending.New(), waiting: map[string]bool{}}
}

// pend adds job id of team (count tasks of gpus each, a gang when count
// > 1) at priority, and queues its tasks.
func (q *queued) pend(id, team string, gpus, priority, count int) *record.Job {
	j := q.job(id, team, gpus, priority, count)
	for _, tid := range j.TaskIDs {
		q.seq++
		t := q.tasks[tid]
		t.Seq = q.seq
		q.queue.Push(pending.Key{Executor: "exec", Team: team, Size: gpus, Res: *j.Spec.Resources}, priority, t)
	}
	return j
}

func (q *queued) AllWorkers() iter.Seq[*record.Worker] { return maps.Values(q.workers) }
func (q *queued) Queue() *pending.Queue                { return q.queue }
func (q *queued) Waiting(j *record.Job) bool           { return q.waiting[j.ID] }

func (q *queued) AtParallelism(j *record.Job) bool {
	active := 0
	for _, id := range j.TaskIDs {
		if q.tasks[id].Active() {
			active++
		}
	}
	return j.Spec.Parallelism > 0 && active >= j.Spec.Parallelism
}

func (q *queued) GangMembers(j *record.Job) ([]*record.Task, bool) {
	var out []*record.Task
	for _, id := range j.TaskIDs {
		if t := q.tasks[id]; t.State == record.TaskPending {
			out = append(out, t)
		}
	}
	return out, len(out) == len(j.TaskIDs)
}

var _ CandidateView = (*queued)(nil)

// names is the candidates' task ids, a gang's as its first member's.
func names(cs []Candidate) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Task.ID)
	}
	return out
}

// The candidates are the queued tasks some victim could make room for,
// in the queue's order (priority, then age), at most n.
func TestCandidates(t *testing.T) {
	cases := []struct {
		name  string
		setup func(q *queued, w *record.Worker)
		n     int
		want  []string
	}{
		{"under quota, by priority then age", func(q *queued, _ *record.Worker) {
			q.quota["ml"] = 800
			q.pend("old", "ml", 1, 0, 1)
			q.pend("high", "ml", 1, 5, 1)
			q.pend("young", "ml", 1, 0, 1)
		}, 8, []string{"high-0", "old-0", "young-0"}},
		{"at most n", func(q *queued, _ *record.Worker) {
			q.quota["ml"] = 800
			q.pend("a", "ml", 1, 0, 1)
			q.pend("b", "ml", 1, 0, 1)
		}, 1, []string{"a-0"}},
		{"no GPUs asked: nothing to take", func(q *queued, _ *record.Worker) {
			q.quota["ml"] = 800
			q.pend("cpu", "ml", 0, 0, 1)
		}, 8, nil},
		{"at quota, only above the team's lowest running priority", func(q *queued, w *record.Worker) {
			q.quota["ml"] = 100
			q.busy(w, "low", "ml", 1, 0)
			q.pend("same", "ml", 1, 1, 1)
			q.pend("above", "ml", 1, 2, 1)
		}, 8, []string{"above-0"}},
		{"at quota, nothing running of its own", func(q *queued, w *record.Worker) {
			q.busy(w, "other", "research", 0, 0)
			q.pend("p", "ml", 1, 9, 1)
		}, 8, nil},
		{"held for by a live hold: it waits for those victims", func(q *queued, w *record.Worker) {
			q.quota["ml"] = 800
			q.pend("p", "ml", 1, 0, 1)
			q.pend("g", "ml", 1, 0, 2)
			w.Holds = []record.DeviceHold{{Device: "GPU-w1-0", TaskID: "p-0", Until: t0.Add(time.Minute)}, {Device: "GPU-w1-1", TaskID: "g-1", Until: t0.Add(time.Minute)}}
		}, 8, nil},
		{"a hold past its bound holds nothing", func(q *queued, w *record.Worker) {
			q.quota["ml"] = 800
			q.pend("p", "ml", 1, 0, 1)
			w.Holds = []record.DeviceHold{{Device: "GPU-w1-0", TaskID: "p-0", Until: t0}}
		}, 8, []string{"p-0"}},
		{"a gang once, with its members; not while it waits for a dependency", func(q *queued, _ *record.Worker) {
			q.quota["ml"] = 800
			q.pend("g", "ml", 1, 0, 3)
			q.pend("dep", "ml", 1, 0, 2)
			q.waiting["dep"] = true
		}, 8, []string{"g-0"}},
		{"a gang a member of which has left the queue: no plan for it now", func(q *queued, _ *record.Worker) {
			q.quota["ml"] = 800
			q.pend("g", "ml", 1, 0, 2)
			q.pend("p", "ml", 1, 0, 1)
			q.tasks["g-1"].State = record.TaskAssigned // still queued in the index, no longer pending
		}, 8, []string{"p-0"}},
		{"at its parallelism", func(q *queued, w *record.Worker) {
			q.quota["ml"] = 800
			j := q.pend("par", "ml", 1, 0, 1)
			j.Spec.Parallelism = 1
			j.TaskIDs = append(j.TaskIDs, "par-run")
			q.tasks["par-run"] = &record.Task{ID: "par-run", JobID: "par", State: record.TaskRunning}
		}, 8, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := newQueued()
			w := q.worker("w1", 4)
			c.setup(q, w)
			got := Candidates(q, t0, c.n)
			if !slices.Equal(names(got), c.want) {
				t.Fatalf("candidates %v, want %v", names(got), c.want)
			}
			for _, cand := range got {
				if cand.Job.Spec.Gang && len(cand.Gang) != len(cand.Job.TaskIDs) {
					t.Fatalf("gang %s with members %d, want %d", cand.Job.ID, len(cand.Gang), len(cand.Job.TaskIDs))
				}
			}
		})
	}
}

// HoldsExpired finds a hold past its bound, or whose task no longer
// waits.
func TestHoldsExpired(t *testing.T) {
	q := newQueued()
	w := q.worker("w1", 2)
	q.pend("p", "ml", 1, 0, 1)
	w.Holds = []record.DeviceHold{{Device: "GPU-w1-0", TaskID: "p-0", Until: t0.Add(time.Minute)}}
	if HoldsExpired(q, t0) {
		t.Fatal("a live hold expired")
	}
	if !HoldsExpired(q, t0.Add(time.Minute)) {
		t.Fatal("a hold at its bound did not expire")
	}
	q.tasks["p-0"].State = record.TaskAssigned
	if !HoldsExpired(q, t0) {
		t.Fatal("a hold whose task was placed did not expire")
	}
}
