package state

import "github.com/gpulayer/gpulayer/coordinator/state/record"

// The topology index: each worker's topology labels are read once, when
// the worker joins the store (putWorker), and kept on its record as small
// numbers that name its NVLink domain, switch and rack in the store's
// table of label values (topoNames). Gang placement (place.ByTopology) then
// compares numbers and groups switches in a slice indexed by number,
// instead of reading three labels from every worker's map and hashing
// switch names into a map at every placement. A worker's labels never
// change once it is registered, so the numbers never go stale; the table
// only grows (by the distinct values ever registered) and is rebuilt
// with the store (reset, restore).

// topoNames numbers topology label values; 0 is "no label".
type topoNames struct {
	ids   map[string]int32
	names []string // names[id]; names[0] is ""
}

func newTopoNames() *topoNames {
	return &topoNames{ids: map[string]int32{}, names: []string{""}}
}

// intern returns v's number, numbering it if new.
func (t *topoNames) intern(v string) int32 {
	if v == "" {
		return 0
	}
	if id, ok := t.ids[v]; ok {
		return id
	}
	id := int32(len(t.names))
	t.ids[v] = id
	t.names = append(t.names, v)
	return id
}

// putWorker puts w in the store with its topology read: every worker
// enters the store here (registration, enrollment, restore).
func (s *Store) putWorker(w *Worker) {
	w.SetTopology(record.Topology{
		Domain: s.topo.intern(w.Labels[labelNVLinkDomain]),
		Switch: s.topo.intern(w.Labels[labelSwitch]),
		Rack:   s.topo.intern(w.Labels[labelRack]),
	})
	s.workers[w.ID] = w
}
