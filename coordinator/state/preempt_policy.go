package state

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
)

// Preemption policy (docs/preemption.md). A pending task P that cannot
// be placed may take GPUs back:
//   - from a task of another team that runs on borrowed GPUs (its team
//     holds more than its quota), when P's team holds less than its own;
//   - from a task of its own team whose priority is below P's.
//
// Never from a job with preemptible: false, a task already told to
// stop, or an attempt that has run less than the minimum runtime (the
// storm guard). A running gang is a victim whole: taking one member
// stops every member, so each must be a victim by these rules. Victims
// are taken lowest priority first, then youngest, on the one worker
// where the fewest of them make P fit (for a gang P, on as many workers
// as it needs: preempt_gang.go); a preemption happens only if P then
// fits.

// Sentinel reasons a task is not a victim; wrapped in ErrConflict when
// an apply refuses a stale decision.
var (
	errNotPreemptible = fmt.Errorf("job is not preemptible: %w", ErrConflict)
	errTooYoung       = fmt.Errorf("attempt has not run its minimum runtime: %w", ErrConflict)
	errNotBorrowing   = fmt.Errorf("task neither borrows GPUs its preemptor's team is owed nor ranks below it: %w", ErrConflict)
	errStopping       = fmt.Errorf("task is not running undisturbed (ended, cancelled or already preempted): %w", ErrConflict)
	errGangMember     = fmt.Errorf("task is a gang member named without every running member of its gang: %w", ErrConflict)
)

// preemptRound is the state one preemption decision reads: the teams'
// use and what the victims chosen so far take from it.
type preemptRound struct {
	usage map[string]TeamUsage
	taken map[string]int64 // per team, hundredths of a GPU
}

func (s *Store) newPreemptRound() *preemptRound {
	return &preemptRound{usage: s.teamUsage(), taken: map[string]int64{}}
}

// quotaOf is a team's guaranteed quota in hundredths of a GPU (a team
// gone since counts none).
func (s *Store) quotaOf(team string) int64 {
	if t, ok := s.teams.Get(team); ok {
		return t.Settings.QuotaCentiGPUs
	}
	return 0
}

// inUse is what team holds now, less what this round already took.
func (r *preemptRound) inUse(team string) int64 {
	return r.usage[team].CentiGPUsInUse - r.taken[team]
}

// attemptSince is when v's current attempt began running (assigned, if
// it has not started).
func attemptSince(v *Task) time.Time {
	a := v.Current()
	if a == nil {
		return v.UpdatedAt
	}
	if !a.StartedAt.IsZero() {
		return a.StartedAt
	}
	return a.AssignedAt
}

// victimErr says why v may not be preempted for p at now in round r
// (nil: it may), as a sentinel: planning asks it of many tasks.
func (s *Store) victimErr(p *Task, pj *Job, v *Task, r *preemptRound, minRuntime time.Duration, now time.Time) error {
	if err := s.victimBaseErr(v, minRuntime, now); err != nil {
		return err
	}
	vj := s.jobs.Get(v.JobID)
	pTeam, vTeam := command.TeamOf(pj.Team), command.TeamOf(vj.Team)
	if pTeam == vTeam {
		if vj.Spec.Priority < pj.Spec.Priority {
			return nil
		}
		return errNotBorrowing
	}
	if r.inUse(pTeam) < s.quotaOf(pTeam) && r.inUse(vTeam) > s.quotaOf(vTeam) {
		return nil
	}
	return errNotBorrowing
}

// victimBaseErr is the part of victimErr that does not depend on the
// task preempting: v, and every other member when v is of a gang, still
// runs undisturbed, may be preempted, and has run its minimum runtime.
func (s *Store) victimBaseErr(v *Task, minRuntime time.Duration, now time.Time) error {
	vj := s.jobs.Get(v.JobID)
	if !vj.Spec.IsPreemptible() {
		return errNotPreemptible
	}
	for _, m := range s.victimGroup(v) {
		switch {
		case !m.Active() || m.Preempt != "" || m.CancelRequested:
			return errStopping
		case now.Sub(attemptSince(m)) < minRuntime:
			return errTooYoung
		}
	}
	return nil
}

// victimGroup is what preempting v stops: v, and when v is a gang member
// every member of its gang, by rank (a member not running counts as
// stopping, so such a gang is no victim).
func (s *Store) victimGroup(v *Task) []*Task {
	vj := s.jobs.Get(v.JobID)
	if !vj.Spec.Gang {
		return []*Task{v}
	}
	out := make([]*Task, 0, len(vj.TaskIDs))
	for _, id := range vj.TaskIDs {
		if m := s.tasks.Get(id); m != nil {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b *Task) int { return a.Index - b.Index })
	return out
}

// takeGroup counts victim v, with the rest of its gang, as taken in the
// round and gone; it returns what it took.
func (s *Store) takeGroup(r *preemptRound, gone map[string]bool, v *Task) []*Task {
	g := s.victimGroup(v)
	for _, m := range g {
		mj := s.jobs.Get(m.JobID)
		if w := s.workers[m.WorkerID]; w != nil {
			r.taken[command.TeamOf(mj.Team)] += fit.TaskCenti(w, m.Devices, mj.Spec.Resources)
		}
		gone[m.ID] = true
	}
	return g
}

// victimOrder ranks w's active tasks as victims: lowest priority first,
// then youngest (latest started), then by id.
func (s *Store) victimOrder(w *Worker) []*Task {
	vs := make([]*Task, 0, w.HeldCount())
	for id := range w.Held() {
		if t := s.tasks.Get(id); t != nil {
			vs = append(vs, t)
		}
	}
	slices.SortFunc(vs, func(a, b *Task) int {
		return cmp.Or(
			cmp.Compare(s.jobs.Get(a.JobID).Spec.Priority, s.jobs.Get(b.JobID).Spec.Priority),
			attemptSince(b).Compare(attemptSince(a)),
			cmp.Compare(a.ID, b.ID))
	})
	return vs
}

// fitsBeside reports whether p (of job pj) would fit on w at now were the
// tasks of gone not there: enough offered devices meeting its terms that
// no other task holds, whole or by a share, and no preemption holds for
// another task.
func (s *Store) fitsBeside(w *Worker, pj *Job, p *Task, gone map[string]bool, now time.Time) bool {
	r := pj.Spec.Resources
	if r == nil || r.GPUs == 0 {
		return true
	}
	whole, shared := s.deviceUseBeside(w, gone)
	return s.fitsUse(w, r, p.ID, whole, shared, now)
}

// fitsUse is fitsBeside with w's devices used as whole and shared say.
func (s *Store) fitsUse(w *Worker, r *command.Resources, taskID string, whole map[string]bool, shared map[string]uint64, now time.Time) bool {
	n := 0
	for _, d := range w.Devices { // the cheap terms first: offered reads the device's identity
		_, used := shared[d.UUID]
		switch {
		case whole[d.UUID]:
		case r.Shared() && !fit.ShareFits(d, r, shared[d.UUID]):
		case !r.Shared() && (used || !fit.DeviceFits(d, r)):
		case !fit.Offered(w, d) || s.heldFromOthers(w, []string{d.UUID}, taskID, now):
		case r.Shared():
			return true
		default:
			n++
		}
	}
	return !r.Shared() && n >= r.GPUs
}

// helps reports whether stopping v frees a device of w that a task
// asking r could use.
func (s *Store) helps(w *Worker, r *command.Resources, v *Task) bool {
	for _, uuid := range v.Devices {
		d, ok := fit.DeviceOf(w, uuid)
		if ok && (fit.DeviceFits(d, r) || (r.Shared() && fit.ShareFits(d, r, 0))) {
			return true
		}
	}
	return false
}
