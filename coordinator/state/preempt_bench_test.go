package state

import (
	"fmt"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/preemption"
)

// BenchmarkPlanPreemption is the leader's look at its worst: 500 workers
// of 8 GPUs all held by a borrowing team, 2,000 tasks of a team owed
// GPUs waiting, and no attempt past its minimum runtime, so that every
// candidate is tried on every worker and none preempts.
func BenchmarkPlanPreemption(b *testing.B) {
	s := borrowedFleet(b, 0)
	for i := range 2000 {
		benchApply(b, s, inTeam(submit(fmt.Sprintf("r%04d", i), 1, 1), "research"))
	}
	b.ResetTimer()
	for b.Loop() {
		if c, ok := s.PlanPreemption(at(60), preemption.Options{MinRuntime: time.Hour}); ok {
			b.Fatalf("preempted %+v", c)
		}
	}
}

// BenchmarkPlanGangPreemption is a look at gangs that cannot be made to
// fit: 500 workers of 8 GPUs all held by team ml, which borrows only 100
// of them (its quota is the rest), every attempt past its minimum
// runtime; 64 gangs of team research, each of 64 members of 8 GPUs (512
// GPUs: more than ml borrows), wait. Every gang is looked at, and none
// preempts.
func BenchmarkPlanGangPreemption(b *testing.B) {
	s := gangBenchStore(b, 390000)
	b.ResetTimer()
	for b.Loop() {
		if c, ok := s.PlanPreemption(at(600), preemption.Options{MinRuntime: time.Minute}); ok {
			b.Fatalf("preempted %+v", c)
		}
	}
}

// BenchmarkPlanGangPreemptionFits is the same fleet with every GPU of ml
// borrowed: the first gang's plan takes 64 tasks on 64 workers, a step
// each.
func BenchmarkPlanGangPreemptionFits(b *testing.B) {
	s := gangBenchStore(b, 0)
	b.ResetTimer()
	for b.Loop() {
		if c, ok := s.PlanPreemption(at(600), preemption.Options{MinRuntime: time.Minute}); !ok || len(c.Victims) != 512 {
			b.Fatalf("plan %v with %d victims, want 512", ok, len(c.Victims))
		}
	}
}

// gangBenchStore is borrowedFleet with 64 gangs of research (64
// members of 8 GPUs each) waiting.
func gangBenchStore(b *testing.B, mlQuota int64) *Store {
	s := borrowedFleet(b, mlQuota)
	for i := range 64 {
		g := inTeam(submit(fmt.Sprintf("g%02d", i), 64, 8), "research")
		g.Spec.Gang = true
		ids := make([]string, 64)
		for k := range ids {
			ids[k] = fmt.Sprintf("g%02d-%02d", i, k)
		}
		g.TaskIDs = ids
		benchApply(b, s, g)
	}
	return s
}

// borrowedFleet is 500 workers of 8 GPUs, each GPU held by a one-GPU
// task of team ml (quota mlQuota hundredths) assigned at second 2, and
// team research, owed 800 GPUs.
func borrowedFleet(b *testing.B, mlQuota int64) *Store {
	s := New()
	benchApply(b, s, command.CreateTeam{Name: "ml", Settings: teamSettings(100, mlQuota), By: "admin", Now: at(0)})
	benchApply(b, s, command.CreateTeam{Name: "research", Settings: teamSettings(100, 80000), By: "admin", Now: at(0)})
	for w := range 500 {
		id := fmt.Sprintf("w%03d", w)
		devs := make([]string, 8)
		for i := range devs {
			devs[i] = fmt.Sprintf("GPU-%s-%d", id, i)
		}
		benchApply(b, s, register(id, devs...))
		for i, d := range devs {
			job := fmt.Sprintf("m%03d%d", w, i)
			benchApply(b, s, inTeam(submit(job, 1, 1), "ml"))
			benchApply(b, s, command.AssignTask{TaskID: job + "-a", WorkerID: id, AttemptID: "att-" + job, Devices: []string{d}, Now: at(2)})
		}
	}
	return s
}

func benchApply(b *testing.B, s *Store, c command.Command) {
	b.Helper()
	if r := s.Apply(c).(Result); r.Err() != nil {
		b.Fatalf("%T: %v", c, r.Err())
	}
}
