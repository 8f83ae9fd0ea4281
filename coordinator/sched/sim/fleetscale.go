package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// Scale sizes the fleet-scale scenario.
type Scale struct {
	Workers, GPUsPerWorker, Teams, Tasks int
	// Horizon is the virtual seconds simulated; the queue should stay
	// non-empty through it.
	Horizon int
	Seed    uint64
}

// FleetScale builds the bench trace: Workers of GPUsPerWorker GPUs (one
// worker in ten with one GPU in MIG mode), Teams of weights 1 to 3 and
// quotas that together exceed the fleet, no borrow limit, and Tasks
// pending at once of mixed sizes: one-GPU tasks, 2-, 4- and 8-GPU tasks,
// gangs of 2 to 64 GPUs, MIG instances and memory shares, each running
// 2 to 10 minutes under a timeout half as long again. The same scale and
// seed give the same trace.
func FleetScale(sc Scale) Trace {
	rng := rand.New(rand.NewPCG(sc.Seed, 1))
	tr := Trace{Horizon: sc.Horizon, FairWindow: true}
	tr.Fleet = []PoolSpec{
		{Prefix: "m", Count: sc.Workers / 10, GPUs: sc.GPUsPerWorker, MIG: 1},
		{Prefix: "w", Count: sc.Workers - sc.Workers/10, GPUs: sc.GPUsPerWorker},
	}
	fleet := float64(sc.Workers * sc.GPUsPerWorker)
	for i := range sc.Teams {
		w := float64(1 + i%3)
		tr.Teams = append(tr.Teams, TeamSpec{Name: fmt.Sprintf("team%02d", i), Weight: w, QuotaGPUs: float64(int(1.5 * fleet * w / float64(2*sc.Teams)))})
	}
	left := sc.Tasks
	for n := 0; left > 0; n++ {
		j := JobSpec{ID: fmt.Sprintf("j%06d", n), Team: tr.Teams[rng.IntN(sc.Teams)].Name, Duration: 120 + rng.IntN(481), Priority: rng.IntN(3), Count: 1}
		j.Timeout = j.Duration * 3 / 2
		switch k := rng.IntN(100); {
		case k < 55:
			j.GPUs, j.Count = 1, 1+rng.IntN(8)
		case k < 70:
			j.GPUs = []int{2, 4, 8}[rng.IntN(3)]
		case k < 78:
			j.Gang = true
			j.Count = []int{2, 4, 8, 16, 32, 64}[rng.IntN(6)]
			j.GPUs = 1
			if j.Count >= 16 {
				j.Count, j.GPUs = j.Count/8, 8 // whole workers
			}
		case k < 88:
			j.MIG, j.Count = true, 1+rng.IntN(4)
		default:
			j.ShareMiB, j.Count = uint64(10240*(1+rng.IntN(3))), 1+rng.IntN(4)
		}
		j.Count = min(j.Count, left)
		if j.Gang && j.Count < 2 {
			j.Gang, j.GPUs = false, 1
		}
		left -= j.Count
		tr.Jobs = append(tr.Jobs, j)
	}
	return tr
}

// Figures are the fleet-scale scenario's measurements.
type Figures struct {
	Placements        int
	PlacementsPerSec  float64 // placements / the time spent in acquires (match + apply)
	P50, P99, Max     time.Duration
	Utilization       float64 // GPU-time held / an ideal packing's, while the queue was non-empty
	FairnessWorst     float64 // the largest relative gap of a team's GPU-time share from its weight share
	Wall, SetupWall   time.Duration
	Steps, QueueAtEnd int
}

// RunFleetScale runs sc and measures it; check, when set, runs after
// every step (the invariants; a bench leaves it out).
func RunFleetScale(sc Scale, check func(*Sim) error) (Figures, error) {
	start := time.Now()
	tr := FleetScale(sc)
	sm, err := New(tr)
	if err != nil {
		return Figures{}, err
	}
	f := Figures{SetupWall: time.Since(start)}
	rep, err := sm.Run(check)
	if err != nil {
		return f, err
	}
	f.Wall = time.Since(start)
	f.Placements, f.Steps, f.QueueAtEnd = rep.Placements, rep.Steps, len(sm.pending)
	var spent time.Duration
	for _, d := range rep.Passes {
		spent += d
	}
	if spent > 0 {
		f.PlacementsPerSec = float64(rep.Placements) / spent.Seconds()
	}
	f.P50, f.P99, f.Max = quantiles(rep.Passes)
	f.Utilization = rep.Utilization()
	_, f.FairnessWorst = rep.Fairness(tr.Teams)
	return f, nil
}

func quantiles(ds []time.Duration) (p50, p99, top time.Duration) {
	if len(ds) == 0 {
		return 0, 0, 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(q float64) time.Duration { return s[min(len(s)-1, int(q*float64(len(s))))] }
	return at(0.50), at(0.99), s[len(s)-1]
}
