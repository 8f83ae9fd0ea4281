package state

import (
	"fmt"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// BenchmarkPlanPreemption is the leader's look at its worst: 500 workers
// of 8 GPUs all held by a borrowing team, 2,000 tasks of a team owed
// GPUs waiting, and no attempt past its minimum runtime, so that every
// candidate is tried on every worker and none preempts.
func BenchmarkPlanPreemption(b *testing.B) {
	s := New()
	apply := func(c command.Command) {
		if r := s.Apply(c).(Result); r.Err() != nil {
			b.Fatalf("%T: %v", c, r.Err())
		}
	}
	apply(command.CreateTeam{Name: "ml", Settings: teamSettings(100, 0), By: "admin", Now: at(0)})
	apply(command.CreateTeam{Name: "research", Settings: teamSettings(100, 80000), By: "admin", Now: at(0)})
	for w := range 500 {
		id := fmt.Sprintf("w%03d", w)
		devs := make([]string, 8)
		for i := range devs {
			devs[i] = fmt.Sprintf("GPU-%s-%d", id, i)
		}
		apply(register(id, devs...))
		for i, d := range devs {
			job := fmt.Sprintf("m%03d%d", w, i)
			apply(inTeam(submit(job, 1, 1), "ml"))
			apply(command.AssignTask{TaskID: job + "-a", WorkerID: id, AttemptID: "att-" + job, Devices: []string{d}, Now: at(2)})
		}
	}
	for i := range 2000 {
		apply(inTeam(submit(fmt.Sprintf("r%04d", i), 1, 1), "research"))
	}
	b.ResetTimer()
	for b.Loop() {
		if c, ok := s.PlanPreemption(at(60), PreemptOptions{MinRuntime: time.Hour}); ok {
			b.Fatalf("preempted %+v", c)
		}
	}
}
