package state

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// BenchmarkGangPlacement plans a gang of 16 one-GPU ranks over 1,000
// workers of 8 GPUs (40 racks of 25, 5 switches a rack), with the
// topology order and with plain id order: what the topology term costs
// placement (the target: at most 10 %).
func BenchmarkGangPlacement(b *testing.B) {
	s := New()
	for i := range 1000 {
		id := fmt.Sprintf("w%04d", i)
		c := register(id, gpuIDs(id, 8)...)
		c.Labels = map[string]string{labelRack: fmt.Sprintf("r%02d", i/25), labelSwitch: fmt.Sprintf("r%02d-s%d", i/25, i%5)}
		if r := s.Apply(c).(Result); r.Err() != nil {
			b.Fatal(r.Err())
		}
	}
	if r := s.Apply(gangJob("g", 16)).(Result); r.Err() != nil {
		b.Fatal(r.Err())
	}
	byID := func(_ *Store, _ *Worker, ws []*Worker) []*Worker {
		slices.SortFunc(ws, func(a, b *Worker) int { return strings.Compare(a.ID, b.ID) })
		return ws
	}
	for _, order := range []struct {
		name string
		fn   func(*Store, *Worker, []*Worker) []*Worker
	}{{"topology", (*Store).byTopology}, {"id-order", byID}} {
		b.Run(order.name, func(b *testing.B) {
			saved := gangOrder
			gangOrder = order.fn
			defer func() { gangOrder = saved }()
			for b.Loop() {
				if _, ok := s.PlanGang("w0500", "", 4, "g"); !ok {
					b.Fatal("no placement")
				}
			}
		})
	}
}

func gpuIDs(worker string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("GPU-%s-%d", worker, i)
	}
	return out
}
