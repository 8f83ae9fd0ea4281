package state

// slotHead is one worker's slots in compareSlots order and how many of
// them a merge has taken.
type slotHead struct {
	list []slot
	at   int
}

// slotHeap is a min-heap of slot lists by their next slot.
type slotHeap []slotHead

func (h slotHeap) less(i, j int) bool {
	return compareSlots(h[i].list[h[i].at], h[j].list[h[j].at]) < 0
}

func (h slotHeap) down(i int) {
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
func (h slotHeap) take(n int) []slot {
	out := make([]slot, 0, n)
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

// firstSlots returns the first n slots, in compareSlots order, of lists
// each already in that order (one per worker): a merge over a heap of the
// lists' heads, so choosing a hold costs the workers plus n steps, not a
// sort of every slot of the fleet.
func firstSlots(lists [][]slot, n int) []slot {
	h := make(slotHeap, 0, len(lists))
	for _, l := range lists {
		if len(l) > 0 {
			h = append(h, slotHead{list: l})
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
	return h.take(n)
}
