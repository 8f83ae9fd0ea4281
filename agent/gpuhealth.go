package agent

import (
	"cmp"
	"context"
	"log/slog"
	"time"
	"unicode/utf8"

	"github.com/gpulayer/gpulayer/agent/devices/health"
	"github.com/gpulayer/gpulayer/agent/devices/nvml"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// HealthWatcher is a device source that watches its GPUs' health
// (nvml.Source): faults as NVML events, and polls.
type HealthWatcher interface {
	Watch(ctx context.Context, uuids []string, opts nvml.WatchOptions, sink func(health.Observation))
}

// healthTick is how often recovering GPUs are checked against their
// hold-down window.
const healthTick = 10 * time.Second

// gpuHealth is the agent's view of its GPUs' health: a tracker fed by the
// watcher, whose statuses are persisted in the data dir and reported with
// the devices.
type gpuHealth struct {
	tracker *health.Tracker
	uuids   []string // the GPUs watched, by index
	obs     chan health.Observation
	clears  chan string       // GPUs an admin asked to clear (heartbeat answers)
	logged  map[string]string // the state and reason last logged, by GPU
}

// startHealth loads the saved statuses and builds the tracker, when the
// device source watches health. A saved file that cannot be read stops the
// agent: starting without it would whitewash faults it recorded.
func (a *Agent) startHealth() error {
	if _, ok := a.cfg.Devices.(HealthWatcher); !ok {
		return nil
	}
	saved, err := health.Load(a.cfg.DataDir)
	if err != nil {
		return err
	}
	uuids := make([]string, 0, len(a.devices))
	for _, d := range a.devices {
		if d.Parent == "" { // a MIG device's health is its GPU's
			uuids = append(uuids, d.UUID)
		}
	}
	a.mu.Lock()
	a.health = &gpuHealth{
		tracker: health.New(a.cfg.HealthPolicy, a.cfg.Clock.Now(), health.BootID(), uuids, saved),
		uuids:   uuids,
		obs:     make(chan health.Observation, 64),
		clears:  make(chan string, 16),
		logged:  map[string]string{},
	}
	a.mu.Unlock()
	for _, s := range saved {
		if s.State != health.Healthy {
			a.log.Warn("GPU fault carried over from before the restart", "uuid", s.UUID, "state", s.State, "reason", s.Reason())
		}
	}
	return nil
}

// watchHealth runs the watcher and applies what it sees until ctx ends.
func (a *Agent) watchHealth(ctx context.Context) {
	a.mu.Lock()
	h := a.health
	a.mu.Unlock()
	if h == nil {
		return
	}
	w := a.cfg.Devices.(HealthWatcher)
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Watch(ctx, h.uuids, nvml.WatchOptions{Poll: a.cfg.HealthPoll, Thresholds: a.cfg.HealthThresholds, Clock: a.cfg.Clock, Logger: a.log}, func(o health.Observation) {
			select {
			case h.obs <- o:
			case <-ctx.Done():
			}
		})
	}()
	tick := a.cfg.Clock.NewTicker(healthTick)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			<-done
			return
		case o := <-h.obs:
			if o.Kind == health.XidError {
				a.cfg.Metrics.xidSeen(o.UUID, o.Xid, string(health.Classify(o.Xid, a.cfg.HealthPolicy.Xids)))
			}
			a.mu.Lock()
			eff := h.tracker.Observe(a.cfg.Clock.Now(), o)
			a.mu.Unlock()
			a.applyHealth(eff)
		case <-tick.C():
			a.mu.Lock()
			changed := h.tracker.Tick(a.cfg.Clock.Now())
			a.mu.Unlock()
			a.applyHealth(health.Effect{Changed: changed})
		case uuid := <-h.clears:
			a.mu.Lock()
			st := h.tracker.Status(uuid)
			changed := false
			if st.State == health.Unhealthy || st.State == health.Unknown || st.Quarantined {
				changed = h.tracker.Clear(a.cfg.Clock.Now(), uuid)
			}
			a.mu.Unlock()
			if changed {
				a.log.Info("GPU cleared by an admin; it returns to service after its hold-down", "uuid", uuid, "was", st.State, "reason", st.Reason())
			}
			a.applyHealth(health.Effect{Changed: changed})
		}
	}
}

// gpuFailer is the runner as the health loop sees it.
type gpuFailer interface {
	FailGPU(uuid, reason string) []string
	FailApp(uuid, reason string) (stopped, spared []string)
}

// failTasks stops the tasks a fault hits: every task on a faulty GPU; for
// an application fault, the task holding the device whole, never the
// tasks sharing it (runner.FailApp).
func (a *Agent) failTasks(r gpuFailer, eff health.Effect) {
	for _, uuid := range a.withMIGDevices(eff.FailTasks) {
		var stopped, spared []string
		if eff.Application {
			stopped, spared = r.FailApp(uuid, eff.Reason)
		} else {
			stopped = r.FailGPU(uuid, eff.Reason)
		}
		for _, att := range stopped {
			a.log.Warn("stopping a task on a faulty GPU", "uuid", uuid, "attempt_id", att, "reason", eff.Reason)
		}
		if len(spared) > 0 {
			a.log.Warn("application fault on a shared GPU: its tasks are left running, since the fault names no process; CUDA reports it to the one it hit", "uuid", uuid, "attempt_ids", spared, "reason", eff.Reason)
		}
	}
}

// applyHealth fails the tasks a fault hits, persists and reports a
// change.
func (a *Agent) applyHealth(eff health.Effect) {
	if a.runner != nil {
		a.failTasks(a.runner, eff)
	}
	if !eff.Changed {
		return
	}
	a.mu.Lock()
	statuses := a.health.tracker.Statuses()
	a.mu.Unlock()
	for _, s := range statuses {
		if said := string(s.State) + " " + s.Reason(); a.health.logged[s.UUID] != said {
			a.health.logged[s.UUID] = said
			level := slog.LevelInfo
			if s.State != health.Healthy {
				level = slog.LevelWarn
			}
			a.log.Log(context.Background(), level, "GPU health changed", "uuid", s.UUID, "state", s.State, "reason", s.Reason())
		}
	}
	if err := health.Save(a.cfg.DataDir, statuses); err != nil {
		a.log.Error("saving GPU health", "error", err)
	}
	a.refreshCDI()            // an unhealthy GPU leaves the spec
	a.leases.nudgeHeartbeat() // the coordinator learns at once
}

// withMIGDevices is uuids with, after each GPU, the MIG devices it is
// split into: a fault of the GPU stops the tasks on its MIG devices too
// (they are given MIG UUIDs, never their GPU's).
func (a *Agent) withMIGDevices(uuids []string) []string {
	if len(uuids) == 0 {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]string, 0, len(uuids))
	for _, u := range uuids {
		out = append(out, u)
		for _, d := range a.devices {
			if d.Parent == u {
				out = append(out, d.UUID)
			}
		}
	}
	return out
}

// deviceView is the devices as reported: each with its health, offered
// only when it is healthy, and how it enforces a memory share
// (gpushare.go).
func (a *Agent) deviceView() []api.Device {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]api.Device, len(a.devices))
	copy(out, a.devices)
	if a.mpsNow() != "" {
		markSharing(out, api.DeviceSharingMPS)
	}
	a.migs.stamp(out) // miglayout.go
	if a.health == nil {
		return out
	}
	for i := range out {
		st := a.health.tracker.Status(cmp.Or(out[i].Parent, out[i].UUID)) // a MIG device's health is its GPU's
		read := out[i].Healthy                                            // the inventory read the device whole
		out[i].Health = string(st.State)
		out[i].HealthReason = clipReason(st.Reason(), api.MaxDeviceHealthReasonBytes)
		out[i].Healthy = read && st.State.Offered()
		if !read && st.State.Offered() {
			// Never the word healthy for a device not offered: the
			// coordinator reads the word as PROTOCOL.md has it.
			out[i].Health = string(health.Unknown)
			out[i].HealthReason = "the GPU's inventory could not be read whole (uuid, name or memory)"
		}
	}
	return out
}

// clearGPUs hands the GPUs an admin asked to clear to the health loop
// (which owns the tracker); one it cannot take now is asked for again by
// the next heartbeat's answer.
func (a *Agent) clearGPUs(uuids []string) {
	a.mu.Lock()
	h := a.health
	a.mu.Unlock()
	if h == nil {
		return
	}
	for _, u := range uuids {
		select {
		case h.clears <- u:
		default:
		}
	}
}

// clipReason bounds a health reason to max bytes, as the coordinator
// requires (a longer one would have the whole report refused), cutting
// at a character and marking the cut.
func clipReason(why string, max int) string {
	const mark = "…"
	if len(why) <= max {
		return why
	}
	cut := max - len(mark)
	for cut > 0 && !utf8.RuneStart(why[cut]) {
		cut--
	}
	return why[:cut] + mark
}
