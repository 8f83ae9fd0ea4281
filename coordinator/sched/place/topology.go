package place

import (
	"slices"
	"strings"

	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// Nearness of a worker to the worker a gang is planned from: the lower,
// the nearer. Workers without the labels are near nothing.
const (
	sameNVLinkDomain = iota
	sameSwitch
	sameRack
	elsewhere
)

// switchGroup is the workers on one switch; its nearness is its nearest
// worker's.
type switchGroup struct {
	near  int
	key   int32 // the switch's number (an index into names)
	slots int   // their free slots together
	count int   // how many of them
	at    int   // where its workers start in the order
}

// ByTopology orders the other ready workers a gang planned from w may
// span: nearest w first (its NVLink domain, its switch, its rack), then,
// at each nearness, the switches with the most free slots first, so that
// the gang needs as few switches as it can, each switch's workers
// together in id order. Workers that name no switch come after those
// that do at their nearness, in id order: with no labels anywhere this
// is id order.
//
// It reads each worker's labels as the numbers its record keeps
// (Worker.Topology; names holds the label values by number, the state's
// topology index), groups switches in a slice indexed by number, and
// sorts the switches and each switch's few workers, not every worker by
// its whole key: at 1,000 workers that keeps the topology term within a
// few per cent of the id order it replaces (the state's
// BenchmarkGangPlacement).
func ByTopology(w *record.Worker, others []*record.Worker, names []string) []*record.Worker {
	here := w.Topology()
	groupOf := make([]int32, len(names)) // switch number → group+1; 0: none yet
	groups := make([]switchGroup, 0, min(len(others), 64))
	var loose [elsewhere + 1][]*record.Worker
	of := make([]int32, len(others)) // each worker's group, -1 when loose
	for i, o := range others {
		t := o.Topology()
		near := elsewhere
		switch {
		case here.Domain != 0 && t.Domain == here.Domain:
			near = sameNVLinkDomain
		case here.Switch != 0 && t.Switch == here.Switch:
			near = sameSwitch
		case here.Rack != 0 && t.Rack == here.Rack:
			near = sameRack
		}
		if t.Switch == 0 {
			of[i] = -1
			loose[near] = append(loose[near], o)
			continue
		}
		g := groupOf[t.Switch] - 1
		if g < 0 {
			g = int32(len(groups))
			groupOf[t.Switch] = g + 1
			groups = append(groups, switchGroup{near: near, key: t.Switch})
		}
		of[i] = g
		gr := &groups[g]
		gr.near = min(gr.near, near)
		gr.slots += freeSlots(o)
		gr.count++
	}
	rank := make([]int, len(groups)) // group index → place in the order
	for g := range rank {
		rank[g] = g
	}
	slices.SortFunc(rank, func(x, y int) int {
		a, b := &groups[x], &groups[y]
		switch {
		case a.near != b.near:
			return a.near - b.near
		case a.slots != b.slots:
			return b.slots - a.slots
		}
		return strings.Compare(names[a.key], names[b.key])
	})
	// Lay the order out: per nearness, the switches in rank order, then
	// the loose workers; then fill each switch's span and sort it by id.
	out := make([]*record.Worker, len(others))
	byID := func(a, b *record.Worker) int { return strings.Compare(a.ID, b.ID) }
	pos, r := 0, 0
	for near := range loose {
		for ; r < len(rank) && groups[rank[r]].near == near; r++ {
			g := &groups[rank[r]]
			g.at, pos = pos, pos+g.count
		}
		slices.SortFunc(loose[near], byID)
		pos += copy(out[pos:], loose[near])
	}
	for i, o := range others {
		if g := of[i]; g >= 0 {
			gr := &groups[g]
			out[gr.at] = o
			gr.at++
		}
	}
	for _, g := range groups {
		slices.SortFunc(out[g.at-g.count:g.at], byID)
	}
	return out
}
