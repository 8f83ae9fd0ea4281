package state

import (
	"slices"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// degrade marks the named devices of a registration degraded, as an agent
// reports them: still offered (healthy true), health word degraded.
func degrade(c command.RegisterWorker, uuids ...string) command.RegisterWorker {
	for i := range c.Devices {
		if slices.Contains(uuids, c.Devices[i].UUID) {
			c.Devices[i].Health, c.Devices[i].HealthReason = api.HealthDegraded, "throttle: clocks held down: HW thermal slowdown"
		}
	}
	return c
}

// A degraded GPU is offered, but chosen only when no healthy GPU of the
// worker fits: whole GPUs, several at once, and shares.
func TestDegradedGPUIsChosenLast(t *testing.T) {
	cases := []struct {
		name string
		reg  command.RegisterWorker
		jobs []command.SubmitJob
		// want is the devices each job's task gets, in order.
		want [][]string
	}{
		{"one GPU at a time: the healthy ones first, then the degraded",
			degrade(register("w1", "GPU-1", "GPU-2", "GPU-3", "GPU-4"), "GPU-1", "GPU-3"),
			[]command.SubmitJob{submit("a", 1, 1), submit("b", 1, 1), submit("c", 1, 1), submit("d", 1, 1)},
			[][]string{{"GPU-2"}, {"GPU-4"}, {"GPU-1"}, {"GPU-3"}}},
		{"three GPUs where two are healthy: one degraded joins them",
			degrade(register("w1", "GPU-1", "GPU-2", "GPU-3", "GPU-4"), "GPU-1", "GPU-3"),
			[]command.SubmitJob{submit("a", 1, 3)},
			[][]string{{"GPU-2", "GPU-4", "GPU-1"}}},
		{"two GPUs where two are healthy: no degraded one",
			degrade(register("w1", "GPU-1", "GPU-2", "GPU-3"), "GPU-1"),
			[]command.SubmitJob{submit("a", 1, 2)},
			[][]string{{"GPU-2", "GPU-3"}}},
		{"a share goes to a healthy GPU while one has room, then to a degraded one",
			degrade(mpsWorker("w1", "GPU-1", "GPU-2"), "GPU-1"),
			[]command.SubmitJob{shareJob("big", 1, 60*gib, api.SharingEnforced), shareJob("s", 1, 30*gib, api.SharingEnforced)},
			[][]string{{"GPU-2"}, {"GPU-1"}}},
		{"every GPU degraded: still offered",
			degrade(register("w1", "GPU-1", "GPU-2"), "GPU-1", "GPU-2"),
			[]command.SubmitJob{submit("a", 1, 2)},
			[][]string{{"GPU-1", "GPU-2"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New()
			mustApply(t, s, c.reg)
			for i, j := range c.jobs {
				mustApply(t, s, j)
				_, devs, ok := placeOn(t, s, "w1")
				if !ok {
					t.Fatalf("job %s was not placed", j.JobID)
				}
				got := slices.Clone(devs)
				want := slices.Clone(c.want[i])
				slices.Sort(got)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Fatalf("job %s got %v, want %v", j.JobID, devs, c.want[i])
				}
			}
		})
	}
}
