package state

import "github.com/gpulayer/gpulayer/coordinator/sched/place"

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

// gangOrder orders the workers a gang may span (place.ByTopology over
// the state's topology index; a benchmark puts id order beside it).
var gangOrder = topologyOrder

// topologyOrder is place.ByTopology over the label values the state
// numbers (gangtopology_index.go).
func topologyOrder(s *Store, w *Worker, others []*Worker) []*Worker {
	return place.ByTopology(w, others, s.topo.names)
}
