package sim

// account adds the interval from the current step to t to the figures:
// what each team held while every team had work waiting, and what the
// fleet held against an ideal packing while any work waited.
func (sm *Sim) account(t int) {
	dt := int64(t - sm.now)
	if dt <= 0 || len(sm.pending) == 0 {
		return
	}
	held := map[string]int64{}
	var busy int64
	for _, r := range sm.running {
		c := taskCenti(r.job)
		held[r.job.Team] += c
		busy += c
	}
	var demand int64
	waits := map[string]bool{}
	for _, p := range sm.pending {
		demand += p.centi
		waits[p.team] = true
	}
	sm.rep.Busy += busy * dt
	sm.rep.Ideal += min(sm.fleetCenti, busy+demand) * dt
	for _, tm := range sm.tr.Teams {
		if !waits[tm.Name] {
			return
		}
	}
	for team, c := range held {
		sm.rep.GPUSeconds[team] += c * dt
	}
}
