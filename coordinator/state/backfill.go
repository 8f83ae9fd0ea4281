package state

import (
	"cmp"
	"slices"
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
// again when the head changes and at least every holdRefresh applied
// commands, and read by the matcher only:
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

// holdCache keeps the hold chosen at one state version for the head job
// it was chosen for.
type holdCache struct {
	version  uint64 // the version last served
	computed uint64 // the version it was chosen at
	ok       bool
	head     string
	hold     *gpuHold
}

// holdRefresh is how many applied commands a hold is kept for while the
// head stays the same: choosing one walks the fleet, and a hold a few
// commands old only holds a device since taken (harmless) or misses one
// since freed (taken by the next choice).
const holdRefresh = 64

// holdFor returns the current hold, or nil: chosen afresh when the head
// of the order changes and at least every holdRefresh commands.
func (s *Store) holdFor(_ time.Time) *gpuHold {
	s.holdMu.Lock()
	defer s.holdMu.Unlock()
	c := &s.holds
	if c.ok && c.version == s.version {
		return c.hold
	}
	t := s.head()
	id := ""
	if t != nil {
		id = t.JobID
	}
	if c.ok && c.head == id && s.version-c.computed < holdRefresh {
		c.version = s.version
		return c.hold
	}
	*c = holdCache{version: s.version, computed: s.version, ok: true, head: id, hold: s.computeHold(t)}
	return c.hold
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
	top := map[string]*Task{}
	for _, byKey := range s.queue.lists {
		for sk, list := range byKey {
			if len(list) > 0 && (top[sk.team] == nil || s.queue.less(list[0], top[sk.team])) {
				top[sk.team] = list[0]
			}
		}
	}
	teams := make([]string, 0, len(top))
	for team := range top {
		teams = append(teams, team)
	}
	slices.SortFunc(teams, s.compareShare)
	for _, team := range teams {
		t := top[team]
		j := s.jobs.get(t.JobID)
		if s.checkTeamRoom(j, wholeCenti(j.Spec)) == nil {
			return t
		}
	}
	return nil
}

// wholeCenti is what a task of j (a gang: the whole gang) needs in
// whole GPUs, in hundredths; a share or MIG task counts its least, 1.
func wholeCenti(spec command.JobSpec) int64 {
	r := spec.Resources
	switch {
	case r == nil || r.GPUs == 0:
		return 0
	case r.Shared() || r.MIGProfile != "":
		return 1
	case spec.Gang:
		return int64(spec.Count*r.GPUs) * command.CentiGPUsPerGPU
	}
	return int64(r.GPUs) * command.CentiGPUsPerGPU
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
	j := s.jobs.get(t.JobID)
	if !large(j.Spec) {
		return nil
	}
	need, per := 1, j.Spec.Resources.GPUs
	if j.Spec.Gang {
		need = j.Spec.Count
	}
	var slots []slot
	for _, w := range s.workers {
		if w.Status != workerReady || !slices.Contains(w.Executors, j.Spec.Executor) ||
			!capabilityAllows(w.Capabilities, "", j.Spec.Capability) || !s.satisfies(w, j.Spec.Target) {
			continue
		}
		if _, broken := s.requiredRule(w, j.rules); broken {
			continue
		}
		slots = append(slots, s.workerSlots(w, j, per)...)
	}
	if len(slots) < need {
		return nil
	}
	slices.SortFunc(slots, func(a, b slot) int {
		return cmp.Or(compareBool(a.unknown, b.unknown), a.at.Compare(b.at), cmp.Compare(a.worker, b.worker), cmp.Compare(a.index, b.index))
	})
	h := &gpuHold{jobID: j.ID, gpus: need * per, devices: map[string]bool{}, known: true}
	for _, sl := range slots[:need] {
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

// workerSlots splits w's devices that fit j into members of per GPUs,
// earliest free first, as many as its placement rules allow.
func (s *Store) workerSlots(w *Worker, j *Job, per int) []slot {
	ends := s.deviceEnds(w)
	type dev struct {
		uuid    string
		at      time.Time
		unknown bool
	}
	var devs []dev
	for _, d := range w.Devices {
		if offered(w, d) && deviceFits(d, j.Spec.Resources) {
			e, busy := ends[d.UUID]
			devs = append(devs, dev{uuid: d.UUID, at: e.at, unknown: busy && e.unknown})
		}
	}
	slices.SortStableFunc(devs, func(a, b dev) int { return cmp.Or(compareBool(a.unknown, b.unknown), a.at.Compare(b.at)) })
	n := len(devs) / per
	if j.Spec.ExclusiveWorker {
		n = min(n, 1)
	}
	if j.Spec.MaxPerWorker > 0 {
		n = min(n, j.Spec.MaxPerWorker)
	}
	if w.MaxTasks > 0 {
		n = min(n, w.MaxTasks)
	}
	out := make([]slot, 0, n)
	for i := range n {
		sl := slot{worker: w.ID, index: i}
		for _, d := range devs[i*per : (i+1)*per] {
			sl.devices = append(sl.devices, d.uuid)
			sl.unknown = sl.unknown || d.unknown
			if d.at.After(sl.at) {
				sl.at = d.at
			}
		}
		out = append(out, sl)
	}
	return out
}

// deviceEnd is when a busy device is expected free.
type deviceEnd struct {
	at      time.Time
	unknown bool
}

// deviceEnds estimates, for each device w's active tasks hold, when the
// last of them ends: its attempt's start (or assignment) plus its job's
// timeout_seconds; unknown when one has no timeout.
func (s *Store) deviceEnds(w *Worker) map[string]deviceEnd {
	out := map[string]deviceEnd{}
	for id := range w.active {
		t := s.tasks.get(id)
		spec := s.jobs.get(t.JobID).Spec
		var end deviceEnd
		if a := t.current(); a != nil && spec.TimeoutSeconds > 0 {
			from := a.StartedAt
			if from.IsZero() {
				from = a.AssignedAt
			}
			end.at = from.Add(time.Duration(spec.TimeoutSeconds) * time.Second)
		} else {
			end.unknown = true
		}
		for _, d := range t.Devices {
			old, seen := out[d]
			if seen && (old.unknown || (!end.unknown && old.at.After(end.at))) {
				continue
			}
			out[d] = end
		}
	}
	return out
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
