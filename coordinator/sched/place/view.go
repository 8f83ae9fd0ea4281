package place

import (
	"iter"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// View is what a placement plan reads of the replicated state; the
// caller holds the store's lock for as long as it is used.
type View interface {
	Fleet
	// AllWorkers yields every worker, in no order.
	AllWorkers() iter.Seq[*record.Worker]
	// WorkerCount is how many workers AllWorkers yields.
	WorkerCount() int
	// HeldFromOthers reports whether any of devs is held on w, at now,
	// by a live preemption hold for a task other than taskID (and not of
	// its gang).
	HeldFromOthers(w *record.Worker, devs []string, taskID string, now time.Time) bool
	// GangOrder orders the workers a gang planned from w may span
	// (ByTopology, over the fleet's topology label values).
	GangOrder(w *record.Worker, others []*record.Worker) []*record.Worker
}
