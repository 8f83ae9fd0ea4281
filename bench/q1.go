package main

import (
	"context"
	"fmt"

	"github.com/gpulayer/gpulayer/coordinator/sched/sim"
)

// runQ1 measures the placement decision at fleet scale: the scheduler
// simulator (coordinator/sched/sim) drives the real state machine, in
// process and without Raft, over 1,000 workers of 8 GPUs, 50 teams and
// 100,000 pending tasks of mixed sizes (gangs of 2-64 GPUs, MIG
// instances, memory shares), asking each worker with room for work as
// its agent's acquire would, for five virtual minutes.
func (e *env) runQ1(ctx context.Context) error {
	sc := sim.Scale{Workers: e.num(50, 1000), GPUsPerWorker: 8, Teams: e.num(5, 50), Tasks: e.num(5000, 100000), Horizon: 300, Seed: 1}
	if err := ctx.Err(); err != nil {
		return err
	}
	f, err := sim.RunFleetScale(sc, nil)
	if err != nil {
		return err
	}
	e.report.detail("q1", f)
	scale := fmt.Sprintf("%d workers x %d GPUs, %d teams, %d tasks", sc.Workers, sc.GPUsPerWorker, sc.Teams, sc.Tasks)
	e.report.add(Row{Scenario: "Q1", Metric: "placements/s (" + scale + ")", Value: fmt.Sprintf("%.0f", f.PlacementsPerSec),
		Reference: "Nomad C1M ~3,750/s, Slurm ~500 jobs/s", Target: "≥ 5,000/s", Met: e.judged(f.PlacementsPerSec >= 5000),
		Note: fmt.Sprintf("%d placements over %d simulated steps; run %.0f s", f.Placements, f.Steps, f.Wall.Seconds())})
	e.report.add(Row{Scenario: "Q1", Metric: "one scheduling pass (match + apply), p99", Value: fmt.Sprintf("%.2f ms", float64(f.P99.Microseconds())/1000),
		Reference: fmt.Sprintf("p50 %.2f ms, max %.2f ms", float64(f.P50.Microseconds())/1000, float64(f.Max.Microseconds())/1000), Target: "≤ 50 ms",
		Met: e.judged(f.P99.Milliseconds() <= 50)})
	e.report.add(Row{Scenario: "Q1", Metric: "GPU utilization while the queue is non-empty, vs an ideal packing", Value: fmt.Sprintf("%.1f %%", 100*f.Utilization),
		Target: "≥ 95 %", Met: e.judged(f.Utilization >= 0.95)})
	e.report.add(Row{Scenario: "Q1", Metric: "fairness: largest gap of a team's GPU-time share from its weight share", Value: fmt.Sprintf("%.1f %%", 100*f.FairnessWorst),
		Target: "≤ 5 %", Met: e.judged(f.FairnessWorst <= 0.05), Note: fmt.Sprintf("%d tasks still queued at the end", f.QueueAtEnd)})
	return nil
}
