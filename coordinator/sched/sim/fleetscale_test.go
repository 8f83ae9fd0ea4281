package sim

import (
	"testing"
)

// A small fleet-scale run keeps every invariant after every step and
// reaches the scenario's fairness and utilization.
func TestFleetScaleSmall(t *testing.T) {
	f, err := RunFleetScale(Scale{Workers: 20, GPUsPerWorker: 8, Teams: 5, Tasks: 2000, Horizon: 900, Seed: 7}, Check)
	if err != nil {
		t.Fatal(err)
	}
	if f.Placements == 0 || f.QueueAtEnd == 0 {
		t.Fatalf("%+v: want placements and a queue still waiting at the horizon", f)
	}
	t.Logf("%+v", f)
}

// BenchmarkFleetScale is the bench scenario's measurement (bench Q1):
// 1,000 workers x 8 GPUs, 50 teams, 100,000 tasks pending. Run it once:
//
//	go test -run '^$' -bench FleetScale -benchtime 1x ./coordinator/sched/sim/
func BenchmarkFleetScale(b *testing.B) {
	benchFleet(b, Scale{Workers: 1000, GPUsPerWorker: 8, Teams: 50, Tasks: 100000, Horizon: 300, Seed: 1})
}

// BenchmarkFleet300 is the same scenario at 300 workers and 30,000
// tasks, a quicker run to profile:
//
//	go test -run '^$' -bench Fleet300 -benchtime 1x -cpuprofile cpu.out ./coordinator/sched/sim/
func BenchmarkFleet300(b *testing.B) {
	benchFleet(b, Scale{Workers: 300, GPUsPerWorker: 8, Teams: 50, Tasks: 30000, Horizon: 300, Seed: 1})
}

func benchFleet(b *testing.B, sc Scale) {
	for b.Loop() {
		f, err := RunFleetScale(sc, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(f.PlacementsPerSec, "placements/s")
		b.ReportMetric(float64(f.P99.Microseconds())/1000, "p99-ms")
		b.ReportMetric(100*f.Utilization, "util-%")
		b.ReportMetric(100*f.FairnessWorst, "fairness-gap-%")
		b.ReportMetric(float64(f.Placements), "placements")
	}
}
