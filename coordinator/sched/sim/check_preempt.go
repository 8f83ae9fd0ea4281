package sim

import (
	"fmt"
	"maps"
	"slices"
)

// checkReclaim finds a team that waits below its quota while another
// team borrows GPUs it could take back: a waiting task of whole GPUs
// (not of a gang) that its team's quota has room for, and a running
// task of a team over its quota, preemptible, past its minimum runtime,
// holding at least as many whole GPUs. While a preemption is in flight
// (a victim within its grace) the check waits for it.
func (sm *Sim) checkReclaim() error {
	if sm.tr.Preemption == nil || len(sm.stopping) > 0 {
		return nil
	}
	inUse, quota := map[string]int64{}, map[string]int64{}
	for _, rec := range sm.s.Teams() {
		inUse[rec.Team.Name], quota[rec.Team.Name] = rec.Usage.CentiGPUsInUse, rec.Team.Settings.QuotaCentiGPUs
	}
	for _, id := range slices.Sorted(maps.Keys(sm.pending)) {
		j := sm.jobs[sm.jobOf(id)]
		if j.Gang || j.GPUs == 0 || j.MIG || j.ShareMiB > 0 || inUse[j.Team]+taskCenti(j) > quota[j.Team] {
			continue
		}
		for vid, r := range sm.running {
			v := r.job
			if v.Team == j.Team || v.NoPreempt || v.MIG || v.ShareMiB > 0 || v.GPUs < j.GPUs || inUse[v.Team] <= quota[v.Team] ||
				sm.now-r.started < sm.tr.Preemption.MinRuntime {
				continue
			}
			return fmt.Errorf("team %s waits below its quota (%d of %d hundredths in use) with %s while team %s borrows (%d of %d) and %s could be taken back: %w",
				j.Team, inUse[j.Team], quota[j.Team], id, v.Team, inUse[v.Team], quota[v.Team], vid, ErrInvariant)
		}
	}
	return nil
}

// checkCheckpoints finds a task whose latest saved checkpoint the state
// no longer names.
func (sm *Sim) checkCheckpoints() error {
	for id, digest := range sm.ckpt {
		tk, err := sm.s.Task(id)
		if err != nil {
			return err
		}
		if tk.Checkpoint == nil || tk.Checkpoint.SHA256 != digest {
			return fmt.Errorf("task %s saved checkpoint %s, the state names %+v: %w", id, digest[:12], tk.Checkpoint, ErrInvariant)
		}
	}
	return nil
}
