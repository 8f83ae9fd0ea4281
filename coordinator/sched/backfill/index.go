package backfill

// Index keeps the workers' slot lists (each in Compare order) in a heap
// by each list's first slot, updated one worker at a time, so that a
// choice copies the heap and takes its first slots instead of ordering
// every worker's again. The state keeps one per hold basis.
type Index struct {
	h   heap     // every head is at its list's start
	ids []string // the worker of h[i]
	pos map[string]int
	n   int // the slots of all lists
}

// Set makes l worker id's list (none: it has no slots).
func (x *Index) Set(id string, l []Slot) {
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
		x.h = append(x.h, head{list: l})
		x.ids = append(x.ids, id)
		x.pos[id] = len(x.h) - 1
		x.fix(len(x.h) - 1)
	}
}

// First returns the first n slots of all the lists, or nil when there
// are fewer.
func (x *Index) First(n int) []Slot {
	if x.n < n {
		return nil
	}
	return append(heap(nil), x.h...).take(n)
}

func (x *Index) swap(i, j int) {
	x.h[i], x.h[j] = x.h[j], x.h[i]
	x.ids[i], x.ids[j] = x.ids[j], x.ids[i]
	x.pos[x.ids[i]], x.pos[x.ids[j]] = i, j
}

// fix restores the heap order around i.
func (x *Index) fix(i int) {
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
