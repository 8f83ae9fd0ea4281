package health

import (
	"maps"
	"slices"
	"strings"
	"time"
)

// Conditions. A condition makes a healthy GPU degraded while it is seen,
// and for the hold-down window after it was last seen: a GPU whose clocks
// come and go keeps its place at the back instead of flapping.
const (
	// CondThrottle: the clocks are held down by hardware slowdown, thermal
	// slowdown or the power brake (NVML's clocks event reasons).
	CondThrottle = "throttle"
	// CondCorrectedECC: more corrected memory errors between two polls
	// than the agent allows.
	CondCorrectedECC = "ecc-corrected"
	// CondRetirePending: memory pages, or rows, wait for a GPU reset to be
	// retired or remapped.
	CondRetirePending = "retire-pending"
	// CondStuck: the GPU has been busy for a window with no process on it.
	CondStuck = "stuck"
)

// condition is one condition of one GPU.
type condition struct {
	why   string
	since time.Time // when it was first seen
	// gone is when it was last seen to go away; zero while it is present.
	gone time.Time
}

// degrade records that condition name is present on GPU uuid. It reports
// whether the GPU's status changed.
func (t *Tracker) degrade(now time.Time, uuid, name, why string) bool {
	if _, ok := t.gpus[uuid]; !ok || name == "" {
		return false
	}
	cs := t.conds[uuid]
	if cs == nil {
		cs = map[string]*condition{}
		t.conds[uuid] = cs
	}
	c, ok := cs[name]
	if !ok {
		cs[name] = &condition{why: why, since: now}
		return true
	}
	changed := !c.gone.IsZero() || c.why != why
	c.gone, c.why = time.Time{}, why
	return changed
}

// undegrade records that condition name is no longer seen on GPU uuid:
// it stays for the hold-down window (expireConditions drops it).
func (t *Tracker) undegrade(now time.Time, uuid, name string) bool {
	c, ok := t.conds[uuid][name]
	if !ok || !c.gone.IsZero() {
		return false
	}
	c.gone = now
	return true
}

// expireConditions drops the conditions gone for the hold-down window.
func (t *Tracker) expireConditions(now time.Time) bool {
	changed := false
	for uuid, cs := range t.conds {
		for name, c := range cs {
			if !c.gone.IsZero() && now.Sub(c.gone) >= t.policy.holdDown() {
				delete(cs, name)
				changed = true
			}
		}
		if len(cs) == 0 {
			delete(t.conds, uuid)
		}
	}
	return changed
}

// conditionReason is the reason of a degraded GPU: its conditions, by
// name, each marked when it is gone and only held.
func (t *Tracker) conditionReason(uuid string) string {
	cs := t.conds[uuid]
	parts := make([]string, 0, len(cs))
	for _, name := range slices.Sorted(maps.Keys(cs)) {
		c := cs[name]
		p := name + ": " + c.why
		if !c.gone.IsZero() {
			p += " (gone; held for the hold-down window)"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ")
}

// degradedSince is when the oldest of a GPU's conditions was first seen.
func (t *Tracker) degradedSince(uuid string) time.Time {
	var since time.Time
	for _, c := range t.conds[uuid] {
		if since.IsZero() || c.since.Before(since) {
			since = c.since
		}
	}
	return since
}
