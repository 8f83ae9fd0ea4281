package state

import (
	"fmt"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// addWorkers registers workers of n GPUs each, named <id>-0.., that run
// up to n tasks at once.
func addWorkers(t *testing.T, s *Store, n int, ids ...string) {
	t.Helper()
	for _, id := range ids {
		devs := make([]string, n)
		for i := range devs {
			devs[i] = fmt.Sprintf("%s-%d", id, i)
		}
		r := register(id, devs...)
		mustApply(t, s, r, command.UpdateWorker{WorkerID: id, Executors: r.Executors, Devices: r.Devices, MaxTasks: n, Now: at(0)})
	}
}

// teamJob is a job of count tasks of gpus each for team, at priority.
func teamJob(id, team string, count, gpus, priority int) command.SubmitJob {
	c := inTeam(submit(id, count, gpus), team)
	c.Spec.Priority = priority
	return c
}

func borrowing(weight, quota int64, borrow *int64) command.TeamSettings {
	return command.TeamSettings{WeightCenti: weight, QuotaCentiGPUs: quota, BorrowLimitCenti: borrow}
}

func limit(v int64) *int64 { return &v }

// placer hands out work as the scheduler would: it matches a worker and
// applies the assignment (a task or a whole gang) the match proposes.
type placer struct {
	t   *testing.T
	s   *Store
	n   int
	now time.Time
}

// once places one task (or gang) on worker and returns the tasks placed.
func (p *placer) once(worker string) []string {
	p.t.Helper()
	c, ok, err := p.s.MatchAt(p.now, worker, "", 0, nil)
	if err != nil {
		p.t.Fatalf("match %s: %v", worker, err)
	}
	if !ok {
		return nil
	}
	p.n++
	if c.Gang != nil {
		g := gangCommand(p.s, worker, c.Gang)
		g.Now, g.RequestID = p.now, fmt.Sprintf("r%d", p.n)
		for i := range g.Members {
			g.Members[i].AttemptID = fmt.Sprintf("g%d-%d", p.n, i)
		}
		mustApply(p.t, p.s, g)
		var ids []string
		for _, m := range c.Gang {
			ids = append(ids, m.TaskID)
		}
		return ids
	}
	mustApply(p.t, p.s, command.AssignTask{TaskID: c.TaskID, WorkerID: worker, AttemptID: fmt.Sprintf("a%d", p.n), Devices: c.Devices, Now: p.now})
	return []string{c.TaskID}
}

// fill places on the workers, in turn, until none takes more, and
// returns the tasks placed in order.
func (p *placer) fill(workers ...string) []string {
	p.t.Helper()
	var out []string
	for progress := true; progress; {
		progress = false
		for _, w := range workers {
			if got := p.once(w); got != nil {
				out = append(out, got...)
				progress = true
			}
		}
	}
	return out
}

// finish ends task id's attempt in success.
func (p *placer) finish(id string) {
	p.t.Helper()
	tk, _ := p.s.Task(id)
	mustApply(p.t, p.s, command.FinishTask{TaskID: id, WorkerID: tk.WorkerID, AttemptID: tk.AttemptID, Now: p.now})
}

// jobsOf maps each task id to its job.
func jobsOf(s *Store, ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		tk, _ := s.Task(id)
		out[i] = tk.JobID
	}
	return out
}

func count(xs []string, x string) int {
	n := 0
	for _, v := range xs {
		if v == x {
			n++
		}
	}
	return n
}
