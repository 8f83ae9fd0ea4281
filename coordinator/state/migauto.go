package state

import (
	"cmp"
	"slices"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// Reads for the MIG auto mode (coordinator/migauto), which repartitions
// an idle GPU when tasks wait for a MIG profile no GPU offers: what the
// queue asks for, and what the fleet offers.

// MIGDemand is the pending tasks that ask for MIG devices of one profile,
// and the executors they run on.
type MIGDemand struct {
	Profile   string
	Tasks     int
	Executors []string
}

// PendingMIGDemand lists, by profile (sorted), the pending tasks that ask
// for MIG devices.
func (s *Store) PendingMIGDemand() []MIGDemand {
	s.mu.RLock()
	defer s.mu.RUnlock()
	by := map[string]*MIGDemand{}
	for _, caps := range s.queue.lists {
		for _, tasks := range caps {
			for _, t := range tasks {
				j := s.jobs.get(t.JobID)
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
			}
		}
	}
	out := make([]MIGDemand, 0, len(by))
	for _, d := range by {
		slices.Sort(d.Executors)
		out = append(out, *d)
	}
	slices.SortFunc(out, func(a, b MIGDemand) int { return cmp.Compare(a.Profile, b.Profile) })
	return out
}

// Offered reports whether placement may give d, a device of w, work:
// healthy, approved, not cordoned, not held by a MIG layout request.
func Offered(w *Worker, d command.Device) bool { return offered(w, d) }
