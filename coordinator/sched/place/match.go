package place

import (
	"maps"
	"slices"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/sched/backfill"
	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
	"github.com/gpulayer/gpulayer/coordinator/state/pending"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
	"github.com/gpulayer/gpulayer/coordinator/state/teams"
)

// MatchView is what a match reads of the replicated state and the
// indexes derived from it; the caller holds the store's read lock for as
// long as it is used.
type MatchView interface {
	View
	Groups
	Shares
	// Worker is the worker of that id, nil if none.
	Worker(id string) *record.Worker
	// Job is the job of that id.
	Job(id string) *record.Job
	// Task is the task of that id, nil if none.
	Task(id string) *record.Task
	// Queue is the pending-task index; the match only reads it.
	Queue() *pending.Queue
	// TeamOrder lists the teams with queued work, lowest fair share
	// first; the caller must not change it.
	TeamOrder() []string
	// Targets lists the target keys w satisfies: untargeted work, work
	// for itself and for each group it belongs to.
	Targets(w *record.Worker) []string
	// Hold is the backfill hold of the head of the order, or nil.
	Hold(now time.Time) *backfill.Hold
	// AtParallelism reports whether j already has as many active tasks
	// as its parallelism allows.
	AtParallelism(j *record.Job) bool
}

// Found is what a match found: a task and its devices, or, for a gang,
// every member's placement (Task is then the member met first).
type Found struct {
	Task    *record.Task
	Devices []string
	Gang    []Member
	// RetryAt, when nothing matched, is the earliest time a task passed
	// over for its affinity or spread may be taken. Zero when none was.
	RetryAt time.Time
	// Examined counts the pending tasks the match read (tests show that
	// it does not grow with work the worker cannot take).
	Examined int
}

// Room is what a worker has free: whole GPUs, and whether any MIG
// device or any room for a share.
type Room struct {
	Whole   int
	Partial bool
}

// admits reports whether a sub-queue's tasks could fit the room: a task
// asking for more whole GPUs than are free cannot, nor a share or MIG
// task where no MIG device is free and no GPU has memory to share.
func (r Room) admits(k pending.SubKey) bool {
	if k.Partial {
		return r.Partial
	}
	return k.Size <= r.Whole
}

// teamList is one sub-queue of a team the worker could take from.
type teamList struct {
	gpus  bool // its tasks ask for GPUs
	tasks []*record.Task
}

// Match finds the best pending task worker w can run now (highest
// priority, then oldest), narrowed by capability, for an acquire that
// takes up to slots tasks (0: any number; it bounds the members of a
// gang w is given); skip names tasks concurrent acquires are handing
// out. It reads the teams in fair-share order and takes the first team's
// best task that fits the worker and the team's room, reading only the
// sub-queues the worker could take from (its executors × {untargeted,
// itself, its groups} × the capabilities it accepts), so pending tasks
// it could never run cost nothing. A zero now never defers a task for
// its affinity or spread.
func Match(v MatchView, w *record.Worker, capability string, slots int, skip map[string]bool, now time.Time) Found {
	caps, anyCap := fit.AcceptedCapabilities(w.Capabilities, capability)
	if !anyCap && len(caps) == 0 {
		return Found{}
	}
	m := matcher{v: v, w: w, capability: capability, slots: slots, skip: skip, now: now,
		gate: map[string]bool{}, hold: v.Hold(now), queue: v.Queue()}
	room := v.WorkerView(w).Room
	targets := v.Targets(w)
	var lists []teamList
	for _, team := range v.TeamOrder() {
		if lists = m.listsOf(team, targets, caps, anyCap, room, lists); len(lists) == 0 {
			continue
		}
		m.lim, m.use = v.Limits(team), v.InUse(team)
		full := m.lim.Full(m.use)
		for _, l := range lists {
			if !(l.gpus && full) {
				m.scan(l.tasks)
			}
		}
		if m.found.Task != nil {
			break
		}
	}
	return m.found
}

// matcher is one match under way.
type matcher struct {
	v          MatchView
	w          *record.Worker
	capability string
	slots      int
	skip       map[string]bool
	now        time.Time
	queue      *pending.Queue
	hold       *backfill.Hold
	gate       map[string]bool // jobs at their parallelism, counted once a match
	gangTried  map[string]bool // gangs planned in this match (most matches meet none)
	miss       misses
	lim        teams.Limits // the limits of the team whose lists are being read
	use        int64        // what it holds
	found      Found
}

// listsOf gathers team's sub-queues the worker could take from with
// what it has free now (room), into buf.
func (m *matcher) listsOf(team string, targets, caps []string, anyCap bool, room Room, buf []teamList) []teamList {
	buf = buf[:0]
	for _, ex := range m.w.Executors {
		for _, tk := range targets {
			for _, sq := range m.queue.TeamSubsOf(pending.Route{Executor: ex, Target: tk}, team) {
				if (!anyCap && !slices.Contains(caps, sq.Key.Capability)) || !room.admits(sq.Key) {
					continue
				}
				buf = append(buf, teamList{gpus: sq.Key.Size > 0 || sq.Key.Partial, tasks: sq.Tasks})
			}
		}
	}
	return buf
}

// atParallelism is the view's answer, once per job a match.
func (m *matcher) atParallelism(j *record.Job) bool {
	if j.Spec.Parallelism <= 0 {
		return false
	}
	full, ok := m.gate[j.ID]
	if !ok {
		full = m.v.AtParallelism(j)
		m.gate[j.ID] = full
	}
	return full
}

// scan reads one sub-queue in order until a task ranks below what was
// found or one is found.
func (m *matcher) scan(list []*record.Task) {
	v, w, now := m.v, m.w, m.now
	for _, t := range list {
		if m.found.Task != nil && !m.queue.Less(t, m.found.Task) {
			return // the rest of this list ranks lower
		}
		m.found.Examined++
		if m.skip[t.ID] {
			continue
		}
		j := v.Job(t.JobID)
		if j.Spec.Gang {
			// A gang is placed whole, at its first member met; one that
			// does not fit now is passed over (backfill).
			if m.gangTried[j.ID] || m.miss.gangFails(j, m.hold, now) || slices.ContainsFunc(j.TaskIDs, func(id string) bool { return m.skip[id] }) {
				continue
			}
			if m.gangTried == nil {
				m.gangTried = map[string]bool{}
			}
			m.gangTried[j.ID] = true
			if plan, ok := m.gangWithin(j); ok {
				m.found.Task, m.found.Devices, m.found.Gang = t, nil, plan
				return
			}
			m.miss.gangFailed(j, m.hold, now)
			continue
		}
		if m.miss.pickFails(j, m.hold, now) {
			if m.hold.Spares(j, now) {
				return // every task of this list asks the same (pending.Key): none fits
			}
			continue
		}
		if m.atParallelism(j) || CanRun(v, w, j, t, m.capability) != nil {
			continue
		}
		devs, ok := PickFor(v, w, j, t, m.hold, now)
		if !ok {
			m.miss.pickFailed(j, m.hold, now)
			continue
		}
		if v.HeldFromOthers(w, devs, t.ID, now) {
			continue
		}
		if m.lim.RoomFor(m.use, fit.TaskCenti(w, devs, j.Spec.Resources), j.Spec.IsPreemptible()) != nil {
			continue
		}
		if until, wait := deferral(v, w, j, t, now); wait {
			if m.found.RetryAt.IsZero() || until.Before(m.found.RetryAt) {
				m.found.RetryAt = until
			}
			continue
		}
		m.found.Task, m.found.Devices, m.found.Gang = t, devs, nil
		return
	}
}

// gangWithin plans gang j as Gang does, leaving out the GPUs the head
// holds unless j may backfill them, and keeps only a placement the
// team's room holds.
func (m *matcher) gangWithin(j *record.Job) ([]Member, bool) {
	v, r := m.v, j.Spec
	if m.lim.RoomFor(m.use, fit.WholeCenti(r), r.IsPreemptible()) != nil && fit.WholeCenti(r) > 1 {
		return nil, false // a gang of whole GPUs needs exactly that: no plan can fit
	}
	ts, ok := GangMembers(v.Task, j)
	if !ok {
		return nil, false
	}
	tent := NewTentative()
	if !m.hold.Spares(j, m.now) {
		tent.reserve(maps.Keys(m.hold.Devices))
	}
	plan, ok := Gang(v, m.w, m.capability, m.slots, j, ts, tent)
	if !ok {
		return nil, false
	}
	var centi int64
	for _, p := range plan {
		centi += fit.TaskCenti(v.Worker(p.WorkerID), p.Devices, r.Resources)
	}
	return plan, m.lim.RoomFor(m.use, centi, r.IsPreemptible()) == nil
}

// GangMembers returns gang job j's tasks by rank (task reads one by
// id), or false unless every one is pending.
func GangMembers(task func(id string) *record.Task, j *record.Job) ([]*record.Task, bool) {
	ts := make([]*record.Task, 0, len(j.TaskIDs))
	for _, id := range j.TaskIDs {
		t := task(id)
		if t == nil || t.State != record.TaskPending {
			return nil, false
		}
		ts = append(ts, t)
	}
	slices.SortFunc(ts, func(a, b *record.Task) int { return a.Index - b.Index })
	return ts, len(ts) > 0
}
