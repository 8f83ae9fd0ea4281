package state

// slotIndex keeps the workers' slot lists of a hold basis (holdbasis.go)
// in a heap by each list's first slot, updated one worker at a time, so
// a choice copies the heap and takes its first slots instead of ordering
// every worker's again.
type slotIndex struct {
	h   slotHeap // every at is 0
	ids []string // the worker of h[i]
	pos map[string]int
	n   int // the slots of all lists
}

// set makes l worker id's list (none: it has no slots).
func (x *slotIndex) set(id string, l []slot) {
	if x.pos == nil {
		x.pos = map[string]int{}
	}
	i, ok := x.pos[id]
	switch {
	case ok && len(l) == 0:
		x.n -= len(x.h[i].list)
		last := len(x.h) - 1
		x.swap(i, last)
		x.h, x.ids = x.h[:last], x.ids[:last]
		delete(x.pos, id)
		if i < last {
			x.fix(i)
		}
	case ok:
		x.n += len(l) - len(x.h[i].list)
		x.h[i].list = l
		x.fix(i)
	case len(l) > 0:
		x.n += len(l)
		x.h = append(x.h, slotHead{list: l})
		x.ids = append(x.ids, id)
		x.pos[id] = len(x.h) - 1
		x.fix(len(x.h) - 1)
	}
}

// first returns the first n slots of all the lists, or nil when there
// are fewer.
func (x *slotIndex) first(n int) []slot {
	if x.n < n {
		return nil
	}
	return append(slotHeap(nil), x.h...).take(n)
}

func (x *slotIndex) swap(i, j int) {
	x.h[i], x.h[j] = x.h[j], x.h[i]
	x.ids[i], x.ids[j] = x.ids[j], x.ids[i]
	x.pos[x.ids[i]], x.pos[x.ids[j]] = i, j
}

// fix restores the heap order around i.
func (x *slotIndex) fix(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !x.h.less(i, p) {
			break
		}
		x.swap(i, p)
		i = p
	}
	for {
		c := 2*i + 1
		if c >= len(x.h) {
			return
		}
		if c+1 < len(x.h) && x.h.less(c+1, c) {
			c++
		}
		if !x.h.less(c, i) {
			return
		}
		x.swap(i, c)
		i = c
	}
}
