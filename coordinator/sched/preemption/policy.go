package preemption

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
	"github.com/gpulayer/gpulayer/coordinator/state/stateerr"
)

// Sentinel reasons a task is not a victim; each wraps ErrConflict, what
// an apply refusing a stale decision answers.
var (
	ErrNotPreemptible = fmt.Errorf("job is not preemptible: %w", stateerr.ErrConflict)
	ErrTooYoung       = fmt.Errorf("attempt has not run its minimum runtime: %w", stateerr.ErrConflict)
	ErrNotBorrowing   = fmt.Errorf("task neither borrows GPUs its preemptor's team is owed nor ranks below it: %w", stateerr.ErrConflict)
	ErrStopping       = fmt.Errorf("task is not running undisturbed (ended, cancelled or already preempted): %w", stateerr.ErrConflict)
	ErrGangMember     = fmt.Errorf("task is a gang member named without every running member of its gang: %w", stateerr.ErrConflict)
)

// Round is what one preemption decision has taken so far: per team, the
// hundredths of a GPU its chosen victims hold, less which the team's use
// is read.
type Round struct {
	taken map[string]int64
}

// NewRound starts a decision with no victim taken.
func NewRound() *Round { return &Round{taken: map[string]int64{}} }

// inUse is what team holds now, less what the round took.
func (r *Round) inUse(v View, team string) int64 { return v.InUse(team) - r.taken[team] }

// quota is team's guaranteed quota in hundredths of a GPU (none for a
// team that is gone).
func quota(v View, team string) int64 { return v.Limits(team).Quota }

// attemptSince is when v's current attempt began running (assigned, if
// it has not started).
func attemptSince(v *record.Task) time.Time {
	a := v.Current()
	if a == nil {
		return v.UpdatedAt
	}
	if !a.StartedAt.IsZero() {
		return a.StartedAt
	}
	return a.AssignedAt
}

// VictimErr says why victim may not be preempted for p (of job pj) at now
// in round r (nil: it may), as one of the sentinels: planning asks it of
// many tasks.
func VictimErr(v View, p *record.Task, pj *record.Job, victim *record.Task, r *Round, minRuntime time.Duration, now time.Time) error {
	if err := victimBaseErr(v, victim, minRuntime, now); err != nil {
		return err
	}
	vj := v.Job(victim.JobID)
	pTeam, vTeam := command.TeamOf(pj.Team), command.TeamOf(vj.Team)
	if pTeam == vTeam {
		if vj.Spec.Priority < pj.Spec.Priority {
			return nil
		}
		return ErrNotBorrowing
	}
	if r.inUse(v, pTeam) < quota(v, pTeam) && r.inUse(v, vTeam) > quota(v, vTeam) {
		return nil
	}
	return ErrNotBorrowing
}

// victimBaseErr is the part of VictimErr that does not depend on the
// task preempting: victim, and every other member when it is of a gang,
// still runs undisturbed, may be preempted, and has run its minimum
// runtime.
func victimBaseErr(v View, victim *record.Task, minRuntime time.Duration, now time.Time) error {
	if !v.Job(victim.JobID).Spec.IsPreemptible() {
		return ErrNotPreemptible
	}
	for _, m := range victimGroup(v, victim) {
		switch {
		case !m.Active() || m.Preempt != "" || m.CancelRequested:
			return ErrStopping
		case now.Sub(attemptSince(m)) < minRuntime:
			return ErrTooYoung
		}
	}
	return nil
}

// victimGroup is what preempting victim stops: it, and when it is a gang
// member every member of its gang, by rank (a member not running counts
// as stopping, so such a gang is no victim).
func victimGroup(v View, victim *record.Task) []*record.Task {
	vj := v.Job(victim.JobID)
	if !vj.Spec.Gang {
		return []*record.Task{victim}
	}
	out := make([]*record.Task, 0, len(vj.TaskIDs))
	for _, id := range vj.TaskIDs {
		if m := v.Task(id); m != nil {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b *record.Task) int { return a.Index - b.Index })
	return out
}

// Take counts victim, with the rest of its gang, as taken in the round
// and gone; it returns what it took.
func (r *Round) Take(v View, gone map[string]bool, victim *record.Task) []*record.Task {
	g := victimGroup(v, victim)
	for _, m := range g {
		mj := v.Job(m.JobID)
		if w := v.Worker(m.WorkerID); w != nil {
			r.taken[command.TeamOf(mj.Team)] += fit.TaskCenti(w, m.Devices, mj.Spec.Resources)
		}
		gone[m.ID] = true
	}
	return g
}

// victimOrder ranks w's active tasks as victims: lowest priority first,
// then youngest (latest started), then by id.
func victimOrder(v View, w *record.Worker) []*record.Task {
	vs := make([]*record.Task, 0, w.HeldCount())
	for id := range w.Held() {
		if t := v.Task(id); t != nil {
			vs = append(vs, t)
		}
	}
	slices.SortFunc(vs, func(a, b *record.Task) int {
		return cmp.Or(
			cmp.Compare(v.Job(a.JobID).Spec.Priority, v.Job(b.JobID).Spec.Priority),
			attemptSince(b).Compare(attemptSince(a)),
			cmp.Compare(a.ID, b.ID))
	})
	return vs
}
