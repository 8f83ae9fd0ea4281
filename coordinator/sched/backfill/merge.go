package backfill

// head is one worker's slots in Compare order and how many of
// them a merge has taken.
type head struct {
	list []Slot
	at   int
}

// heap is a min-heap of Slot lists by their next Slot.
type heap []head

func (h heap) less(i, j int) bool {
	return Compare(h[i].list[h[i].at], h[j].list[h[j].at]) < 0
}

func (h heap) down(i int) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && h.less(c+1, c) {
			c++
		}
		if !h.less(c, i) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// take pops the first n slots of a heap (which it uses up).
func (h heap) take(n int) []Slot {
	out := make([]Slot, 0, n)
	for len(out) < n && len(h) > 0 {
		top := &h[0]
		out = append(out, top.list[top.at])
		if top.at++; top.at == len(top.list) {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		h.down(0)
	}
	return out
}

// First returns the first n slots, in Compare order, of lists
// each already in that order (one per worker), or nil when they hold
// fewer than n (as Index.First): a merge over a heap of the lists' heads,
// so choosing a hold costs the workers plus n steps, not a sort of every
// Slot of the fleet.
func First(lists [][]Slot, n int) []Slot {
	h := make(heap, 0, len(lists))
	total := 0
	for _, l := range lists {
		if len(l) > 0 {
			h = append(h, head{list: l})
			total += len(l)
		}
	}
	if total < n {
		return nil
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
	return h.take(n)
}
