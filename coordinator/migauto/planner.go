package migauto

import (
	"slices"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/internal/gpusku"
)

// Label is the worker label that opts a worker in ("on") or out ("off")
// of the auto mode, whatever the cluster's setting.
const Label = "gpulayer.io/mig-auto"

// Defaults of Settings.
const (
	DefaultWindow      = 2 * time.Minute
	DefaultMinInterval = 30 * time.Minute
)

// By is the actor the auto mode's requests are audited under.
const By = "mig-auto"

// Settings are the auto mode's.
type Settings struct {
	// Cluster turns the auto mode on for every worker not labelled
	// Label=off; without it only workers labelled Label=on take part.
	Cluster bool
	// Window is how long a profile's demand must last; MinInterval how
	// long a GPU is left alone after its last MIG layout request.
	Window, MinInterval time.Duration
}

// Planner decides, one step at a time, which GPU to repartition. It keeps
// since when each profile has been in demand; it is not safe for
// concurrent use.
type Planner struct {
	settings Settings
	since    map[string]time.Time
	// wanted are the profiles in demand at the last step; goneSince is
	// since when each profile once in demand has been out of it; start
	// is when the planner first stepped (a profile never in demand counts
	// as gone since then).
	wanted    map[string]bool
	goneSince map[string]time.Time
	start     time.Time
}

// New builds a planner; zero durations take their defaults.
func New(s Settings) *Planner {
	if s.Window <= 0 {
		s.Window = DefaultWindow
	}
	if s.MinInterval <= 0 {
		s.MinInterval = DefaultMinInterval
	}
	return &Planner{settings: s, since: map[string]time.Time{}, goneSince: map[string]time.Time{}}
}

// Step reads the demand and the fleet at now and returns the layout
// request to make, if any: at most one a step. A GPU is repartitioned for
// lasting demand first; failing that, a GPU the auto mode partitioned is
// given back whole once its profiles' demand has been gone a Window
// (giveBack).
func (p *Planner) Step(now time.Time, demand []state.MIGDemand, fleet []state.WorkerGPUs) (command.SetMIGLayout, bool) {
	if p.start.IsZero() {
		p.start = now
	}
	wanted := map[string]bool{}
	for _, d := range demand {
		wanted[d.Profile] = true
		delete(p.goneSince, d.Profile)
		if _, ok := p.since[d.Profile]; !ok {
			p.since[d.Profile] = now
		}
	}
	for prof := range p.wanted {
		if !wanted[prof] {
			p.goneSince[prof] = now // the first step without it
		}
	}
	p.wanted = wanted
	for prof := range p.since {
		if !wanted[prof] {
			delete(p.since, prof) // a break: the window starts again
		}
	}
	for _, d := range demand {
		if now.Sub(p.since[d.Profile]) < p.settings.Window || offersFree(fleet, d.Profile) {
			continue
		}
		if c, ok := p.pick(now, d, fleet); ok {
			p.since[d.Profile] = now
			return c, true
		}
	}
	return p.giveBack(now, fleet)
}

// offersFree reports whether a MIG device of profile is offered and
// free somewhere: its tasks are only waiting for a heartbeat.
func offersFree(fleet []state.WorkerGPUs, profile string) bool {
	for _, wg := range fleet {
		w := &wg.Worker.Worker
		if w.Status != state.WorkerReady {
			continue
		}
		for _, d := range w.Devices {
			if d.MIGProfile == profile && fit.Offered(w, d) && len(wg.Holders[d.UUID]) == 0 && wg.Worker.Unapproved[d.UUID] == "" {
				return true
			}
		}
	}
	return false
}

// pick is the first GPU, by worker id then index, on a worker where one
// of d's tasks could run (state.MIGDemand.Workers), that could offer d's
// profile and may be repartitioned now, with the layout that fills it.
func (p *Planner) pick(now time.Time, d state.MIGDemand, fleet []state.WorkerGPUs) (command.SetMIGLayout, bool) {
	for _, wg := range fleet {
		w := &wg.Worker.Worker
		if _, runs := slices.BinarySearch(d.Workers, w.ID); !p.takesPart(w) || !runs {
			continue // no waiting task could run there
		}
		for _, gpu := range w.Devices {
			if gpu.Parent != "" || !p.idle(now, wg, gpu) {
				continue
			}
			layout, err := gpusku.FillMIGLayout(gpu.Name, d.Profile)
			if err != nil {
				continue // not a model that has the profile
			}
			return command.SetMIGLayout{WorkerID: w.ID, UUID: gpu.UUID, Layout: layout, Auto: true, By: By, Now: now}, true
		}
	}
	return command.SetMIGLayout{}, false
}

// takesPart reports whether w is ready and in the auto mode.
func (p *Planner) takesPart(w *state.Worker) bool {
	if w.Status != state.WorkerReady {
		return false
	}
	switch w.Labels[Label] {
	case "on":
		return true
	case "off":
		return false
	}
	return p.settings.Cluster
}

// idle reports whether gpu of wg is offered (or in MIG mode with nothing
// held against it), holds no task on itself or a MIG device, has no
// layout request pending or failed, and none within MinInterval.
func (p *Planner) idle(now time.Time, wg state.WorkerGPUs, gpu command.Device) bool {
	w := &wg.Worker.Worker
	if !fit.Offered(w, gpu) || wg.Worker.Unapproved[gpu.UUID] != "" || len(wg.Holders[gpu.UUID]) > 0 {
		return false
	}
	for _, m := range w.MIGLayouts {
		if m.UUID == gpu.UUID && (m.State != state.MIGApplied || now.Sub(m.At) < p.settings.MinInterval) {
			return false
		}
	}
	for _, d := range w.Devices {
		if d.Parent == gpu.UUID && (len(wg.Holders[d.UUID]) > 0 || !fit.Offered(w, d)) {
			return false
		}
	}
	return true
}
