package state

import (
	"fmt"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/place"
	"github.com/gpulayer/gpulayer/coordinator/state/pending"
)

// Candidate is a task acquire may hand to a worker, with the devices it
// would get.
type Candidate struct {
	TaskID  string
	Devices []string
	// RetryAt, when nothing matched, is the earliest time a task passed
	// over for its affinity or spread (place's affinity.go) may be taken: the
	// caller should look again then. Zero when none was passed over.
	RetryAt time.Time
	// Gang, when the task is a gang member, places the whole gang
	// (gang.go): it is proposed as one AssignGang, not an AssignTask.
	Gang []place.Member
}

// Match finds the best pending task that worker can run now: highest
// priority, then oldest (place.Match, over the store's view). skip names
// tasks already being handed out by concurrent acquires.
func (s *Store) Match(workerID, capability string, skip map[string]bool) (Candidate, bool, error) {
	return s.MatchAt(time.Time{}, workerID, capability, 0, skip)
}

// MatchAt is Match at time now, which decides whether a task with soft
// affinity or spread is still waiting for a worker that suits it better
// (a zero now: never). slots is how many tasks the worker can take now
// (0: any number); it bounds the members of a gang it is given.
func (s *Store) MatchAt(now time.Time, workerID, capability string, slots int, skip map[string]bool) (Candidate, bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	w, ok := s.workers[workerID]
	if !ok {
		return Candidate{}, false, fmt.Errorf("worker %s: %w", workerID, ErrWorkerNotRegistered)
	}
	switch w.Status {
	case workerRevoked:
		return Candidate{}, false, fmt.Errorf("worker %s: %w", workerID, ErrWorkerRevoked)
	case workerPending:
		return Candidate{}, false, fmt.Errorf("worker %s: %w", workerID, ErrWorkerPending)
	case workerReady, workerOffline:
	default:
		return Candidate{}, false, nil
	}
	f := place.Match(s.planView(), w, capability, slots, skip, now)
	if f.Task == nil {
		return Candidate{RetryAt: f.RetryAt}, false, nil
	}
	return Candidate{TaskID: f.Task.ID, Devices: f.Devices, Gang: f.Gang}, true, nil
}

// targetsOf lists the target keys a worker satisfies: untargeted work,
// work for itself, and work for every group it belongs to.
func (s *Store) targetsOf(w *Worker) []string {
	out := []string{"", pending.TargetKey(&command.Target{Kind: targetWorker, ID: w.ID})}
	for _, g := range s.groups.Of(w.ID) { // sorted
		out = append(out, pending.TargetKey(&command.Target{Kind: targetGroup, ID: g}))
	}
	return out
}
