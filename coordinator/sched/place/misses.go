package place

import (
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/backfill"
	"github.com/gpulayer/gpulayer/coordinator/state/pending"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// What one match learns and need not learn again. Within one match, the
// worker's devices do not change: a task asking for resources no device
// choice could meet means every later task asking the same fails too,
// and a gang that could not be planned means every gang of the same shape
// and at least its size fails too. So a match over a long queue of tasks
// that do not fit the worker costs a map lookup per task, not a device
// choice (or a plan over the fleet) each.

// pickKey is what a device choice depends on besides the worker: the
// resources, and whether the head's hold is spared (package backfill).
type pickKey struct {
	r      command.Resources
	spared bool
}

// gangShape is what a gang's plan depends on besides its size; a gang
// with affinity rules is never taken as another's shape.
type gangShape struct {
	team, executor, target, capability string
	r                                  command.Resources
	exclusive                          bool
	maxPerWorker                       int
	spared                             bool
}

// misses are one match's failed choices.
type misses struct {
	picks map[pickKey]bool
	gangs map[gangShape]int // the least count that failed
}

func (m *misses) pickFails(j *record.Job, h *backfill.Hold, now time.Time) bool {
	return m.picks[pickKey{j.Spec.Asked(), h.Spares(j, now)}]
}

func (m *misses) pickFailed(j *record.Job, h *backfill.Hold, now time.Time) {
	if m.picks == nil {
		m.picks = map[pickKey]bool{}
	}
	m.picks[pickKey{j.Spec.Asked(), h.Spares(j, now)}] = true
}

func shapeOf(j *record.Job, h *backfill.Hold, now time.Time) (gangShape, bool) {
	spec := j.Spec
	return gangShape{
		team: command.TeamOf(j.Team), executor: spec.Executor, target: pending.TargetKey(spec.Target), capability: spec.Capability,
		r: spec.Asked(), exclusive: spec.ExclusiveWorker, maxPerWorker: spec.MaxPerWorker, spared: h.Spares(j, now),
	}, len(spec.Affinity) == 0 && !spec.Spread
}

func (m *misses) gangFails(j *record.Job, h *backfill.Hold, now time.Time) bool {
	k, ok := shapeOf(j, h, now)
	least, seen := m.gangs[k]
	return ok && seen && j.Spec.Count >= least
}

func (m *misses) gangFailed(j *record.Job, h *backfill.Hold, now time.Time) {
	k, ok := shapeOf(j, h, now)
	if !ok {
		return
	}
	if m.gangs == nil {
		m.gangs = map[gangShape]int{}
	}
	if least, seen := m.gangs[k]; !seen || j.Spec.Count < least {
		m.gangs[k] = j.Spec.Count
	}
}
