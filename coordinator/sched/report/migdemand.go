package report

import (
	"cmp"
	"slices"

	"github.com/gpulayer/gpulayer/coordinator/sched/place"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// What the MIG auto mode (coordinator/migauto) reads to repartition an
// idle GPU when tasks wait for a MIG profile no GPU offers: what the
// queue asks for, and where it could run.

// MIGDemand is the pending tasks that ask for MIG devices of one profile,
// the executors they run on, and the ready workers where at least one of
// them could run once a GPU there offers the profile: every term of the
// task but its devices (executor, capability, target, affinity, a
// worker's exclusivity, max per worker; place.CanRun).
type MIGDemand struct {
	Profile   string
	Tasks     int
	Executors []string
	// Workers are sorted by id.
	Workers []string
}

// PendingMIGDemand lists, by profile (sorted), the pending tasks that ask
// for MIG devices.
func PendingMIGDemand(v place.MatchView) []MIGDemand {
	by := map[string]*MIGDemand{}
	seen := map[string]bool{} // profile and job already weighed
	for _, sq := range v.Queue().All() {
		for _, t := range sq.Tasks {
			j := v.Job(t.JobID)
			if j == nil || j.Spec.Resources == nil || j.Spec.Resources.MIGProfile == "" {
				continue
			}
			p := j.Spec.Resources.MIGProfile
			d, ok := by[p]
			if !ok {
				d = &MIGDemand{Profile: p}
				by[p] = d
			}
			d.Tasks++
			if !slices.Contains(d.Executors, j.Spec.Executor) {
				d.Executors = append(d.Executors, j.Spec.Executor)
			}
			addMIGWorkers(v, d, j, t, seen)
		}
	}
	out := make([]MIGDemand, 0, len(by))
	for _, d := range by {
		slices.Sort(d.Executors)
		slices.Sort(d.Workers)
		out = append(out, *d)
	}
	slices.SortFunc(out, func(a, b MIGDemand) int { return cmp.Compare(a.Profile, b.Profile) })
	return out
}

// addMIGWorkers adds to d the ready workers t (of job j) could run on,
// its devices aside; a job's tasks share their terms, so each job is
// weighed once a profile (seen).
func addMIGWorkers(v place.MatchView, d *MIGDemand, j *record.Job, t *record.Task, seen map[string]bool) {
	key := d.Profile + "\x00" + j.ID
	if seen[key] {
		return
	}
	seen[key] = true
	for w := range v.AllWorkers() {
		if w.Status == record.WorkerReady && !slices.Contains(d.Workers, w.ID) && place.CanRun(v, w, j, t, "") == nil {
			d.Workers = append(d.Workers, w.ID)
		}
	}
}
