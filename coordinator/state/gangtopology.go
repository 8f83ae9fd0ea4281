package state

import (
	"slices"
	"strings"
)

// The topology labels a worker may carry (set by its agent's --label or
// its join token's labels), which gang placement reads: a gang's ranks
// talk to each other at every step, so it spans as few NVLink domains,
// switches and racks as it can. The words are the contract's
// (api.LabelNVLinkDomain, LabelSwitch, LabelRack; vocab_test.go).
const (
	labelNVLinkDomain = "gpulayer.io/nvlink-domain"
	labelSwitch       = "gpulayer.io/switch"
	labelRack         = "gpulayer.io/rack"
)

// Nearness of a worker to the worker a gang is planned from: the lower,
// the nearer. Workers without the labels are near nothing.
const (
	sameNVLinkDomain = iota
	sameSwitch
	sameRack
	elsewhere
)

// gangOrder orders the workers a gang may span (byTopology; a benchmark
// puts id order beside it).
var gangOrder = (*Store).byTopology

// switchGroup is the workers on one switch; its nearness is its nearest
// worker's.
type switchGroup struct {
	near  int
	key   string // the switch
	slots int    // their free slots together
	count int    // how many of them
	at    int    // where its workers start in the order
}

// byTopology orders the other ready workers a gang planned from w may
// span: nearest w first (its NVLink domain, its switch, its rack), then,
// at each nearness, the switches with the most free slots first, so that
// the gang needs as few switches as it can, each switch's workers
// together in id order. Workers that name no switch come after those
// that do at their nearness, in id order: with no labels anywhere this
// is id order. It sorts the switches and each switch's few workers, not
// every worker by its whole key, and allocates per switch nothing but
// its entry: at 1,000 workers that keeps the topology term close to the
// id order it replaces (BenchmarkGangPlacement).
func (s *Store) byTopology(w *Worker, others []*Worker) []*Worker {
	domain, hereSwitch, rack := w.Labels[labelNVLinkDomain], w.Labels[labelSwitch], w.Labels[labelRack]
	index := make(map[string]int, len(others)/4)
	var groups []switchGroup
	var loose [elsewhere + 1][]*Worker
	of := make([]int, len(others)) // each worker's group, -1 when loose
	for i, o := range others {
		// Each label read once, and the asking worker's only where it has one.
		sw := o.Labels[labelSwitch]
		near := elsewhere
		switch {
		case domain != "" && o.Labels[labelNVLinkDomain] == domain:
			near = sameNVLinkDomain
		case hereSwitch != "" && sw == hereSwitch:
			near = sameSwitch
		case rack != "" && o.Labels[labelRack] == rack:
			near = sameRack
		}
		if sw == "" {
			of[i] = -1
			loose[near] = append(loose[near], o)
			continue
		}
		g, ok := index[sw]
		if !ok {
			g = len(groups)
			index[sw] = g
			groups = append(groups, switchGroup{near: near, key: sw})
		}
		of[i] = g
		groups[g].near = min(groups[g].near, near)
		groups[g].slots += s.freeSlots(o)
		groups[g].count++
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
		return strings.Compare(a.key, b.key)
	})
	// Lay the order out: per nearness, the switches in rank order, then
	// the loose workers; then fill each switch's span and sort it by id.
	out := make([]*Worker, len(others))
	byID := func(a, b *Worker) int { return strings.Compare(a.ID, b.ID) }
	pos, r := 0, 0
	for near := range loose {
		for ; r < len(rank) && groups[rank[r]].near == near; r++ {
			g := &groups[rank[r]]
			g.at, pos = pos, pos+g.count
		}
		slices.SortFunc(loose[near], byID)
		pos += copy(out[pos:], loose[near])
	}
	fill := make([]int, len(groups))
	for i, o := range others {
		if g := of[i]; g >= 0 {
			out[groups[g].at+fill[g]] = o
			fill[g]++
		}
	}
	for _, g := range groups {
		slices.SortFunc(out[g.at:g.at+g.count], byID)
	}
	return out
}
