package state

import (
	"slices"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// The MIG demand names, per profile, the ready workers where one of its
// waiting tasks could run once a GPU there offers the profile: a worker
// without the task's executor or capability, outside its target, or not
// ready is not named, so the auto mode never repartitions a GPU there.
func TestMIGDemandNamesTheWorkersItsTasksCouldRunOn(t *testing.T) {
	s := New()
	anyCap := register("w-any")
	other := register("w-other")
	other.Capabilities = []string{"cpu-only"}
	container := register("w-container")
	container.Executors = []string{"container"}
	target := register("w-target")
	for _, c := range []command.RegisterWorker{anyCap, other, container, target} {
		mustApply(t, s, c)
	}
	mig := func(id, profile string, edit func(*command.JobSpec)) command.SubmitJob {
		c := submit(id, 2, 1)
		c.Spec.Resources.MIGProfile = profile
		edit(&c.Spec)
		return c
	}
	mustApply(t, s, mig("cap", "3g.40gb", func(sp *command.JobSpec) { sp.Capability = "a100" }))
	mustApply(t, s, mig("pinned", "1g.10gb", func(sp *command.JobSpec) { sp.Target = &command.Target{Kind: "worker", ID: "w-target"} }))
	got := map[string][]string{}
	for _, d := range s.PendingMIGDemand() {
		got[d.Profile] = d.Workers
	}
	for profile, want := range map[string][]string{
		"3g.40gb": {"w-any", "w-target"}, // w-other lacks the capability, w-container the executor
		"1g.10gb": {"w-target"},          // the job targets it
	} {
		if !slices.Equal(got[profile], want) {
			t.Errorf("%s: workers %v, want %v", profile, got[profile], want)
		}
	}
}
