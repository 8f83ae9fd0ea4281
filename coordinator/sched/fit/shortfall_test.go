package fit

import (
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// worker is a worker offering its GPUs as they stand (approved before
// approvals were kept), the unhealthy ones named.
func worker(n int, unhealthy ...string) *record.Worker {
	w := &record.Worker{}
	for i := range n {
		d := h100(string(rune('a' + i)))
		for _, u := range unhealthy {
			if u == d.UUID {
				d.Healthy = false
			}
		}
		w.Devices = append(w.Devices, d)
	}
	return w
}

func TestGPUShortfall(t *testing.T) {
	for _, c := range []struct {
		name  string
		cands []*record.Worker
		r     *command.Resources
		says  string // "" when some worker could
	}{
		{"no GPUs asked", nil, nil, ""},
		{"a worker has them", []*record.Worker{worker(2), worker(4)}, &command.Resources{GPUs: 4}, ""},
		{"none has so many", []*record.Worker{worker(2), worker(3)}, &command.Resources{GPUs: 4}, "needs 4 GPUs; the most any live worker has is 3"},
		{"enough, not healthy", []*record.Worker{worker(4, "a")}, &command.Resources{GPUs: 4}, "the most any live worker has healthy now is 3"},
		{"terms spelled out", []*record.Worker{worker(4)}, &command.Resources{GPUs: 1, GPUModel: "a100", GPUMemoryMiB: 40960},
			"needs 1 GPUs (model a100, at least 40960 MiB); the most any live worker has is 0"},
		{"a share with no room anywhere", []*record.Worker{worker(1)}, &command.Resources{GPUs: 1, GPUMemoryMiB: 90000, GPUSharing: "shared"},
			"needs a share of 90000 MiB of one GPU; no live worker has such a GPU"},
		{"a share that fits", []*record.Worker{worker(1)}, &command.Resources{GPUs: 1, GPUMemoryMiB: 1000, GPUSharing: "shared"}, ""},
	} {
		got := GPUShortfall(c.cands, c.r)
		if (c.says == "") != (got == "") || !strings.Contains(got, c.says) {
			t.Errorf("%s: %q, want %q", c.name, got, c.says)
		}
	}
}

func TestGangShortfall(t *testing.T) {
	gang := func(count, gpus int) command.JobSpec {
		return command.JobSpec{Count: count, Gang: true, Resources: &command.Resources{GPUs: gpus}}
	}
	if got := GangShortfall([]*record.Worker{worker(4), worker(4)}, gang(4, 2)); got != "" {
		t.Errorf("two workers of four GPUs hold a gang of four of two: %q", got)
	}
	capped := worker(8)
	capped.MaxTasks = 1
	if got := GangShortfall([]*record.Worker{capped, worker(2)}, gang(4, 2)); !strings.Contains(got, "can hold at most 2 of its tasks") {
		t.Errorf("one task on the capped worker, one on the other: %q", got)
	}
	spec := gang(3, 1)
	spec.ExclusiveWorker = true
	if got := GangShortfall([]*record.Worker{worker(8), worker(8)}, spec); !strings.Contains(got, "at most 2") {
		t.Errorf("an exclusive gang takes one task a worker: %q", got)
	}
}
