package sim

import (
	"errors"
	"fmt"
	"math"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// ErrInvariant is wrapped by every broken invariant.
var ErrInvariant = errors.New("scheduler invariant broken")

// Check is the invariants checked after every step:
//   - no team holds more than quota + borrow limit;
//   - a team's jobs that may not be preempted hold no more than its quota;
//   - what the state counts a team to hold is what its running tasks hold;
//   - no gang is partly placed;
//   - no GPU sits idle while a one-GPU task of a team with room for it
//     waits (unless a large task holds GPUs as they free up: backfill);
//   - where the trace preempts (preempt.go): no team waits below its
//     quota while another borrows GPUs it could take back, and a task
//     never loses the latest checkpoint it saved.
func Check(sm *Sim) error {
	held, firm := map[string]int64{}, map[string]int64{}
	for _, r := range sm.running {
		c := taskCenti(r.job)
		held[r.job.Team] += c
		if r.job.NoPreempt {
			firm[r.job.Team] += c
		}
	}
	for _, rec := range sm.s.Teams() {
		st, name := rec.Team.Settings, rec.Team.Name
		if rec.Usage.CentiGPUsInUse != held[name] {
			return fmt.Errorf("team %s: the state counts %d hundredths in use, its running tasks hold %d: %w", name, rec.Usage.CentiGPUsInUse, held[name], ErrInvariant)
		}
		if st.BorrowLimitCenti != nil && held[name] > st.QuotaCentiGPUs+*st.BorrowLimitCenti {
			return fmt.Errorf("team %s holds %d hundredths, over quota %d + borrow limit %d: %w", name, held[name], st.QuotaCentiGPUs, *st.BorrowLimitCenti, ErrInvariant)
		}
		if firm[name] > st.QuotaCentiGPUs {
			return fmt.Errorf("team %s runs %d hundredths of jobs that may not be preempted, over its quota %d: %w", name, firm[name], st.QuotaCentiGPUs, ErrInvariant)
		}
	}
	if err := sm.checkGangs(); err != nil {
		return err
	}
	if err := sm.checkReclaim(); err != nil {
		return err
	}
	if err := sm.checkCheckpoints(); err != nil {
		return err
	}
	return sm.checkNoIdle()
}

// checkGangs finds a gang some of whose members run while others wait.
func (sm *Sim) checkGangs() error {
	ran := map[string]bool{}
	for id, r := range sm.running {
		if r.job.Gang && !ran[r.job.ID] {
			ran[r.job.ID] = true
			rec, err := sm.s.Job(r.job.ID)
			if err != nil {
				return err
			}
			for _, tk := range rec.Tasks {
				if tk.State == "pending" {
					return fmt.Errorf("gang %s: %s runs while %s waits: %w", r.job.ID, id, tk.ID, ErrInvariant)
				}
			}
		}
	}
	return nil
}

// checkNoIdle finds a free whole GPU while a one-GPU task waits whose
// team has room for it, when no large task waits (which may hold GPUs).
func (sm *Sim) checkNoIdle() error {
	room := map[string]bool{}
	for _, rec := range sm.s.Teams() {
		st := rec.Team.Settings
		room[rec.Team.Name] = st.BorrowLimitCenti == nil || rec.Usage.CentiGPUsInUse+command.CentiGPUsPerGPU <= st.QuotaCentiGPUs+*st.BorrowLimitCenti
	}
	var small string
	for id, p := range sm.pending {
		j := sm.jobs[sm.jobOf(id)]
		if j.GPUs > 1 || j.Gang {
			return nil
		}
		if j.GPUs == 1 && !j.NoPreempt && room[p.team] && (small == "" || id < small) {
			small = id
		}
	}
	if small == "" {
		return nil
	}
	for _, w := range sm.workers {
		if idle := sm.idleWhole(w); idle > 0 {
			return fmt.Errorf("worker %s has %d whole GPUs idle while %s waits with room in its team: %w", w, idle, small, ErrInvariant)
		}
	}
	return nil
}

// idleWhole counts w's whole GPUs (not in MIG mode) no running task holds.
func (sm *Sim) idleWhole(w string) int {
	busy := map[string]bool{}
	for id, r := range sm.running {
		if r.worker == w {
			tk, _ := sm.s.Task(id)
			for _, d := range tk.Devices {
				busy[d] = true
			}
		}
	}
	n := 0
	for _, p := range sm.tr.Fleet {
		if len(w) > len(p.Prefix) && w[:len(p.Prefix)] == p.Prefix {
			for g := p.MIG; g < p.GPUs; g++ {
				if !busy[fmt.Sprintf("%s-g%d", w, g)] {
					n++
				}
			}
		}
	}
	return n
}

// jobOf is the job of a task the run submitted ("<job>-<index>").
func (sm *Sim) jobOf(taskID string) string {
	i := len(taskID) - 1
	for i > 0 && taskID[i] != '-' {
		i--
	}
	return taskID[:i]
}

// Fairness is each team's share of the GPU-time counted while every team
// had work waiting, against its weight share; it reports the largest
// relative gap (0.05: 5 %).
func (r Report) Fairness(teams []TeamSpec) (map[string]float64, float64) {
	var total int64
	var weights float64
	for _, t := range teams {
		total += r.GPUSeconds[t.Name]
		weights += weightOf(t)
	}
	shares := map[string]float64{}
	worst := 0.0
	if total == 0 {
		return shares, 0
	}
	for _, t := range teams {
		shares[t.Name] = float64(r.GPUSeconds[t.Name]) / float64(total)
		want := weightOf(t) / weights
		worst = math.Max(worst, math.Abs(shares[t.Name]-want)/want)
	}
	return shares, worst
}

func weightOf(t TeamSpec) float64 {
	if t.Weight == 0 {
		return 1
	}
	return t.Weight
}
