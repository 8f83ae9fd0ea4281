package migauto

import (
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/internal/clock"
)

// split is worker w1 whose GPU-0 the auto mode split into two idle
// 3g.40gb devices at at.
func split(at time.Time) state.WorkerGPUs {
	w := node("w1", gpu("GPU-0", a100))
	w.Worker.Worker.Devices[0].MIGEnabled = true
	for _, id := range []string{"MIG-0", "MIG-1"} {
		w.Worker.Worker.Devices = append(w.Worker.Worker.Devices, command.Device{UUID: id, Parent: "GPU-0", MIGProfile: "3g.40gb", Healthy: true})
	}
	w.Worker.Worker.MIGLayouts = []state.MIGLayout{{UUID: "GPU-0", Layout: []string{"3g.40gb", "3g.40gb"}, State: state.MIGApplied, By: By, Auto: true, At: at}}
	return w
}

// A GPU the auto mode split is given back whole once its profile's
// demand has been gone a whole window, not before, and not while the
// demand lasts (its devices are offered free then, so no GPU is split
// either).
func TestAGPUIsGivenBackWhenItsDemandIsGone(t *testing.T) {
	start := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	clk := clock.NewFake(start)
	p := New(Settings{Cluster: true, Window: 2 * time.Minute, MinInterval: 30 * time.Minute})
	fleet := []state.WorkerGPUs{split(start.Add(-time.Hour))}
	for range 3 {
		if got := step(t, p, clk, want3g, fleet); got != "" {
			t.Fatalf("asked %s while the demand lasts", got)
		}
		clk.Advance(time.Minute)
	}
	if got := step(t, p, clk, nil, fleet); got != "" { // the demand is gone from here
		t.Fatalf("gave %s back at once", got)
	}
	clk.Advance(time.Minute)
	if got := step(t, p, clk, nil, fleet); got != "" {
		t.Fatalf("gave %s back within the window", got)
	}
	clk.Advance(time.Minute)
	c, ok := p.Step(clk.Now(), nil, fleet)
	if !ok || c.WorkerID != "w1" || c.UUID != "GPU-0" || len(c.Layout) != 0 || !c.Auto || c.By != By {
		t.Fatalf("after the window without demand: %+v %v, want GPU-0 asked back whole", c, ok)
	}
}

// Only the auto mode's own, applied layout on an idle GPU, older than the
// minimum interval, on a worker in the auto mode, is given back.
func TestOnlyAnIdleAutoLayoutIsGivenBack(t *testing.T) {
	start := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	for name, c := range map[string]struct {
		edit func(*state.WorkerGPUs)
		want string
	}{
		"idle": {func(*state.WorkerGPUs) {}, "w1/GPU-0"},
		"an admin's": {func(w *state.WorkerGPUs) {
			w.Worker.Worker.MIGLayouts[0].Auto, w.Worker.Worker.MIGLayouts[0].By = false, "admin"
		}, ""},
		"a device in use": {func(w *state.WorkerGPUs) { w.Holders["MIG-1"] = []state.GPUHolder{{TaskID: "t"}} }, ""},
		"split recently":  {func(w *state.WorkerGPUs) { w.Worker.Worker.MIGLayouts[0].At = start.Add(-10 * time.Minute) }, ""},
		"still pending":   {func(w *state.WorkerGPUs) { w.Worker.Worker.MIGLayouts[0].State = state.MIGPending }, ""},
		"whole already":   {func(w *state.WorkerGPUs) { w.Worker.Worker.MIGLayouts[0].Layout = nil }, ""},
		"cordoned":        {func(w *state.WorkerGPUs) { w.Worker.Worker.Cordons = map[string]string{"GPU-0": ""} }, ""},
		"opted out":       {func(w *state.WorkerGPUs) { w.Worker.Worker.Labels = map[string]string{Label: "off"} }, ""},
	} {
		t.Run(name, func(t *testing.T) {
			clk := clock.NewFake(start)
			p := New(Settings{Cluster: true, Window: time.Minute, MinInterval: 30 * time.Minute})
			w := split(start.Add(-time.Hour))
			c.edit(&w)
			fleet := []state.WorkerGPUs{w}
			step(t, p, clk, nil, fleet)
			clk.Advance(time.Minute)
			if got := step(t, p, clk, nil, fleet); got != c.want {
				t.Fatalf("%q, want %q", got, c.want)
			}
		})
	}
}
