package migauto

import (
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
)

// giveBack is the first GPU, by worker id then index, that the auto mode
// partitioned and whose demand is gone, asked back whole: its layout is
// the auto mode's (an admin's layout is the admin's to undo), applied,
// and at least MinInterval old; none of its profiles has been in demand
// for a Window (or since the planner started); it is offered and neither
// it nor any of its MIG devices holds a task; and its worker is ready and
// in the auto mode.
func (p *Planner) giveBack(now time.Time, fleet []state.WorkerGPUs) (command.SetMIGLayout, bool) {
	for _, wg := range fleet {
		w := &wg.Worker.Worker
		if !p.takesPart(w) {
			continue
		}
		for _, gpu := range w.Devices {
			if gpu.Parent != "" || !p.idle(now, wg, gpu) {
				continue
			}
			m, ok := autoLayout(w, gpu.UUID)
			if !ok || !p.demandGone(now, m.Layout) {
				continue
			}
			return command.SetMIGLayout{WorkerID: w.ID, UUID: gpu.UUID, Auto: true, By: By, Now: now}, true
		}
	}
	return command.SetMIGLayout{}, false
}

// autoLayout is the auto mode's applied layout of GPU uuid, if that is
// what w's request for it is (idle has checked it is applied and old
// enough).
func autoLayout(w *state.Worker, uuid string) (state.MIGLayout, bool) {
	for _, m := range w.MIGLayouts {
		if m.UUID == uuid {
			return m, m.Auto && m.By == By && len(m.Layout) > 0
		}
	}
	return state.MIGLayout{}, false
}

// demandGone reports whether no profile of layout has been in demand for
// a Window, counted from the first step without it.
func (p *Planner) demandGone(now time.Time, layout []string) bool {
	for _, prof := range layout {
		if p.wanted[prof] {
			return false
		}
		gone, ok := p.goneSince[prof]
		if !ok {
			gone = p.start
		}
		if now.Sub(gone) < p.settings.Window {
			return false
		}
	}
	return true
}
