package state

import "github.com/gpulayer/gpulayer/coordinator/sched/report"

// Reads for the MIG auto mode (coordinator/migauto), which repartitions
// an idle GPU when tasks wait for a MIG profile no GPU offers: what the
// queue asks for, and what the fleet offers.

// MIGDemand is the pending tasks that ask for MIG devices of one profile
// and where they could run (report.MIGDemand).
type MIGDemand = report.MIGDemand

// PendingMIGDemand lists, by profile (sorted), the pending tasks that ask
// for MIG devices (report.PendingMIGDemand).
func (s *Store) PendingMIGDemand() []MIGDemand {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return report.PendingMIGDemand(s.planView())
}
