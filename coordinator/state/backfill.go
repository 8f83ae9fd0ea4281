package state

import (
	"cmp"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// Backfill. A pending gang or multi-GPU task at the head of the order
// (the top task of the first team in fair-share order with room for it)
// holds the GPUs it needs as they free up: the devices that fit it and
// free earliest, estimated from the running tasks' timeout_seconds (a
// free device first, then by estimated end, worker id and device order),
// so every leader holds the same ones. Another task may take a held GPU
// only when its own timeout_seconds ends before the last held GPU is
// expected free; one without a timeout, or any while an estimate is
// unknown (a holder runs without a timeout), may not. The hold is chosen
// from the replicated state alone (holdFor), and read by the matcher
// only:
// it is a leader's choice among assignments the state machine would all
// accept.

// gpuHold is the head task's hold.
type gpuHold struct {
	jobID   string
	gpus    int // the GPUs it holds
	devices map[string]bool
	// until is when the last held GPU is expected free; known is false
	// when some holder has no timeout.
	until time.Time
	known bool
}

// holdCache keeps the hold of one state version.
type holdCache struct {
	version uint64
	ok      bool
	hold    *gpuHold
}

// holdFor returns the current hold, or nil. It is a function of the
// replicated state alone, chosen afresh after every applied command:
// a replica restored from a snapshot and one that replayed the log hold
// the same GPUs, so a new leader matches as the old one would have.
func (s *Store) holdFor(_ time.Time) *gpuHold {
	s.holdMu.Lock()
	defer s.holdMu.Unlock()
	if s.holds.ok && s.holds.version == s.version {
		return s.holds.hold
	}
	s.holds = holdCache{version: s.version, ok: true, hold: s.computeHold(s.head())}
	return s.holds.hold
}

// spares reports whether a task of j may take held GPUs at now: it is the
// holder, or its timeout ends before they are needed.
func (h *gpuHold) spares(j *Job, now time.Time) bool {
	if h == nil || h.jobID == j.ID {
		return true
	}
	to := j.Spec.TimeoutSeconds
	return h.known && to > 0 && !now.Add(time.Duration(to)*time.Second).After(h.until)
}

// large reports whether j's tasks need more than one whole GPU together.
func large(spec command.JobSpec) bool {
	r := spec.Resources
	if r == nil || r.GPUs == 0 || r.Shared() || r.MIGProfile != "" {
		return false
	}
	if spec.Gang {
		return spec.Count*r.GPUs > 1
	}
	return r.GPUs > 1
}

// head is the first task of the order whose team has room for it: each
// team's top queued task, teams in fair-share order.
func (s *Store) head() *Task {
	type top struct {
		t    *Task
		prio int
	}
	tops := map[string]top{}
	for _, sq := range s.queue.All() {
		t := sq.Tasks[0]
		if cur, ok := tops[sq.Key.Team]; !ok || sq.Prio > cur.prio || (sq.Prio == cur.prio && t.Seq < cur.t.Seq) {
			tops[sq.Key.Team] = top{t, sq.Prio} // pending.Queue.Less, its first task's priority kept
		}
	}
	teams := make([]string, 0, len(tops))
	for team := range tops {
		teams = append(teams, team)
	}
	for _, team := range s.sortByShare(teams) {
		t := tops[team].t
		j := s.jobs.Get(t.JobID)
		if s.checkTeamRoom(j, wholeCenti(j.Spec)) == nil {
			return t
		}
	}
	return nil
}

// mostCenti is the most one task of spec can hold, in hundredths of a
// GPU: a whole GPU for each device it asks for (a gang's for its every
// member).
func mostCenti(spec command.JobSpec) int64 {
	r := spec.Resources
	switch {
	case r == nil || r.GPUs == 0:
		return 0
	case spec.Gang:
		return int64(spec.Count*r.GPUs) * command.CentiGPUsPerGPU
	}
	return int64(r.GPUs) * command.CentiGPUsPerGPU
}

// wholeCenti is what a task of j (a gang: the whole gang) needs in
// whole GPUs, in hundredths; a share or MIG task counts its least, 1.
func wholeCenti(spec command.JobSpec) int64 {
	if r := spec.Resources; r != nil && r.GPUs > 0 && (r.Shared() || r.MIGProfile != "") {
		return 1
	}
	return mostCenti(spec)
}

// slot is one place a member of the head could run: its devices and
// when they are expected free.
type slot struct {
	worker  string
	index   int
	devices []string
	at      time.Time
	unknown bool
}

// computeHold chooses the hold of head t, or nil when there is none, it
// is not large, or the fleet could not hold it even as tasks end.
func (s *Store) computeHold(t *Task) *gpuHold {
	if t == nil {
		return nil
	}
	j := s.jobs.Get(t.JobID)
	if !large(j.Spec) {
		return nil
	}
	need, per := 1, j.Spec.Resources.GPUs
	if j.Spec.Gang {
		need = j.Spec.Count
	}
	chosen := s.holdChoice(j, per, need) // holdbasis.go
	if chosen == nil {
		return nil
	}
	h := &gpuHold{jobID: j.ID, gpus: need * per, devices: map[string]bool{}, known: true}
	for _, sl := range chosen {
		for _, d := range sl.devices {
			h.devices[d] = true
		}
		h.known = h.known && !sl.unknown
		if sl.at.After(h.until) {
			h.until = sl.at
		}
	}
	return h
}

// deviceEnd is when a busy device is expected free.
type deviceEnd struct {
	at      time.Time
	unknown bool
}

// deviceEnds estimates, for each device w's active tasks hold, when the
// last of them ends (endOf, kept with what each task holds: teamroom.go).
func (s *Store) deviceEnds(w *Worker) map[string]deviceEnd {
	out := map[string]deviceEnd{}
	for id := range w.Held() {
		end := s.inuse.byTask[id].end
		for _, d := range s.tasks.Get(id).Devices {
			old, seen := out[d]
			if seen && (old.unknown || (!end.unknown && old.at.After(end.at))) {
				continue
			}
			out[d] = end
		}
	}
	return out
}

// endOf is when t's current attempt is expected to end: its start (or
// assignment) plus its job's timeout_seconds; unknown without one.
func endOf(t *Task, j *Job) deviceEnd {
	a := t.Current()
	if a == nil || j.Spec.TimeoutSeconds <= 0 {
		return deviceEnd{unknown: true}
	}
	from := a.StartedAt
	if from.IsZero() {
		from = a.AssignedAt
	}
	return deviceEnd{at: from.Add(time.Duration(j.Spec.TimeoutSeconds) * time.Second)}
}

// compareSlots orders slots as the hold takes them: known ends before
// unknown, earliest first, then by worker and member.
func compareSlots(a, b slot) int {
	return cmp.Or(compareBool(a.unknown, b.unknown), a.at.Compare(b.at), cmp.Compare(a.worker, b.worker), cmp.Compare(a.index, b.index))
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
