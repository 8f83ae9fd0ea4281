package state

import (
	"fmt"
	"strings"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// Why a task waits when some live worker could run it but every one is
// taken by a placement rule: the job runs each task alone
// (exclusive_worker), a worker already runs as many of the job's tasks
// as max_per_worker allows, or a worker runs another job's exclusive
// task. Waiting for GPUs to free up says nothing (the task waits for
// room); these rules are easy to forget, so they are named.

// takenReason says why no worker of cands can take a task of j now
// because of the placement rules above, or "" when one of them is held
// by nothing but room. It reads the workers' active tasks, which are
// replicated, so every node says the same.
func (s *Store) takenReason(cands []*Worker, j *Job) string {
	spec := j.Spec
	busy, capped, held := 0, 0, 0
	holder := ""
	for _, w := range cands {
		sameJob, other := 0, ""
		for id := range w.Held() {
			t := s.tasks.Get(id)
			switch {
			case t.JobID == j.ID:
				sameJob++
			case s.jobs.Get(t.JobID).Spec.ExclusiveWorker && (other == "" || t.JobID < other):
				other = t.JobID
			}
		}
		switch {
		case spec.ExclusiveWorker && w.HeldCount() > 0:
			busy++
		case other != "":
			held++
			if holder == "" || other < holder {
				holder = other
			}
		case spec.MaxPerWorker > 0 && sameJob >= spec.MaxPerWorker:
			capped++
		default:
			return ""
		}
	}
	if len(cands) == 0 {
		return ""
	}
	var parts []string
	if busy > 0 {
		parts = append(parts, fmt.Sprintf("%d %s other tasks and it runs alone (--exclusive)", busy, verb(busy, "runs", "run")))
	}
	if held > 0 {
		parts = append(parts, fmt.Sprintf("%d %s an exclusive task of %s", held, verb(held, "runs", "run"), s.jobNamedFor(holder, command.TeamOf(j.Team))))
	}
	if capped > 0 {
		parts = append(parts, fmt.Sprintf("%d already %s %d of its tasks (--max-per-worker %d)", capped, verb(capped, "runs", "run"), spec.MaxPerWorker, spec.MaxPerWorker))
	}
	return fmt.Sprintf("waits for a worker: of the %d live %s that can run it, %s", len(cands), verb(len(cands), "worker", "workers"), strings.Join(parts, "; "))
}

// verb picks the singular or plural form for n.
func verb(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
