package migauto

import (
	"slices"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/internal/clock"
)

func gpu(uuid, model string) command.Device {
	return command.Device{UUID: uuid, Name: model, MemoryMiB: 81920, Healthy: true}
}

// node is a ready worker running exec with the given GPUs.
func node(id string, devs ...command.Device) state.WorkerGPUs {
	return state.WorkerGPUs{Worker: state.WorkerRecord{Worker: state.Worker{ID: id, Status: state.WorkerReady, Executors: []string{"exec"}, Devices: devs}},
		Holders: map[string][]state.GPUHolder{}}
}

const a100 = "NVIDIA A100-SXM4-80GB"

// want3g is two tasks waiting for 3g.40gb that could run on workers a, b
// and w1 (state.MIGDemand.Workers).
var want3g = []state.MIGDemand{{Profile: "3g.40gb", Tasks: 2, Executors: []string{"exec"}, Workers: []string{"a", "b", "w1"}}}

// step runs one step and says which GPU it repartitions ("" for none).
func step(t *testing.T, p *Planner, clk *clock.Fake, demand []state.MIGDemand, fleet []state.WorkerGPUs) string {
	t.Helper()
	c, ok := p.Step(clk.Now(), demand, fleet)
	if !ok {
		return ""
	}
	if !c.Auto || c.By != By || !c.Now.Equal(clk.Now()) {
		t.Fatalf("request %+v", c)
	}
	return c.WorkerID + "/" + c.UUID
}

// Demand must last a whole window, without a break, before a GPU is
// repartitioned, filled with the profile; a repartition starts the window
// again, so a lasting demand takes one more GPU a window.
func TestDemandMustLastAWindow(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC))
	p := New(Settings{Cluster: true, Window: 2 * time.Minute, MinInterval: 30 * time.Minute})
	fleet := []state.WorkerGPUs{node("w1", gpu("GPU-0", a100), gpu("GPU-1", a100))}
	if got := step(t, p, clk, want3g, fleet); got != "" {
		t.Fatalf("repartitioned %s at once", got)
	}
	clk.Advance(time.Minute)
	if got := step(t, p, clk, nil, fleet); got != "" { // a break
		t.Fatalf("repartitioned %s without demand", got)
	}
	clk.Advance(30 * time.Second)
	step(t, p, clk, want3g, fleet) // the window starts again here
	clk.Advance(90 * time.Second)
	if got := step(t, p, clk, want3g, fleet); got != "" {
		t.Fatalf("repartitioned %s before a whole window without a break", got)
	}
	clk.Advance(30 * time.Second)
	c, ok := p.Step(clk.Now(), want3g, fleet)
	if !ok || c.UUID != "GPU-0" || !slices.Equal(c.Layout, []string{"3g.40gb", "3g.40gb"}) {
		t.Fatalf("after the window: %+v %v, want GPU-0 split in two 3g.40gb", c, ok)
	}
	// GPU-0 now awaits its layout; the demand goes on.
	fleet[0].Worker.Worker.MIGLayouts = []state.MIGLayout{{UUID: "GPU-0", Layout: c.Layout, State: state.MIGPending, At: clk.Now()}}
	clk.Advance(time.Minute)
	if got := step(t, p, clk, want3g, fleet); got != "" {
		t.Fatalf("repartitioned %s within a window of the last one", got)
	}
	clk.Advance(time.Minute)
	if got := step(t, p, clk, want3g, fleet); got != "w1/GPU-1" {
		t.Fatalf("a window later: %q, want w1/GPU-1", got)
	}
}

// A GPU that holds a task, is cordoned, awaits approval or a layout, has
// a MIG device in use, was repartitioned within the minimum interval, or
// cannot offer the profile is left alone; a free MIG device of the
// profile anywhere means no repartition.
func TestOnlyAnIdleCapableGPUIsRepartitioned(t *testing.T) {
	start := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	recent := []state.MIGLayout{{UUID: "GPU-0", Layout: []string{"7g.80gb"}, State: state.MIGApplied, At: start.Add(-10 * time.Minute)}}
	for name, c := range map[string]struct {
		edit func(*state.WorkerGPUs)
		want string
	}{
		"idle":              {func(*state.WorkerGPUs) {}, "w1/GPU-0"},
		"busy":              {func(w *state.WorkerGPUs) { w.Holders["GPU-0"] = []state.GPUHolder{{TaskID: "t"}} }, ""},
		"cordoned":          {func(w *state.WorkerGPUs) { w.Worker.Worker.Cordons = map[string]string{"GPU-0": ""} }, ""},
		"unhealthy":         {func(w *state.WorkerGPUs) { w.Worker.Worker.Devices[0].Healthy = false }, ""},
		"awaiting approval": {func(w *state.WorkerGPUs) { w.Worker.Unapproved = map[string]string{"GPU-0": "new"} }, ""},
		"recently split":    {func(w *state.WorkerGPUs) { w.Worker.Worker.MIGLayouts = recent }, ""},
		"split long ago": {func(w *state.WorkerGPUs) {
			w.Worker.Worker.MIGLayouts = []state.MIGLayout{{UUID: "GPU-0", State: state.MIGApplied, At: start.Add(-time.Hour)}}
		}, "w1/GPU-0"},
		"failed layout": {func(w *state.WorkerGPUs) {
			w.Worker.Worker.MIGLayouts = []state.MIGLayout{{UUID: "GPU-0", State: state.MIGFailed, At: start.Add(-time.Hour)}}
		}, ""},
		"a MIG device in use": {func(w *state.WorkerGPUs) {
			w.Worker.Worker.Devices[0].MIGEnabled = true
			w.Worker.Worker.Devices = append(w.Worker.Worker.Devices, command.Device{UUID: "MIG-0", Parent: "GPU-0", MIGProfile: "7g.80gb", Healthy: true})
			w.Holders["MIG-0"] = []state.GPUHolder{{TaskID: "t"}}
		}, ""},
		"a free 3g.40gb": {func(w *state.WorkerGPUs) {
			w.Worker.Worker.Devices = append(w.Worker.Worker.Devices, gpu("GPU-9", a100), command.Device{UUID: "MIG-9", Parent: "GPU-9", MIGProfile: "3g.40gb", Healthy: true})
			w.Worker.Worker.Devices[1].MIGEnabled = true
		}, ""},
		"a model without the profile":   {func(w *state.WorkerGPUs) { w.Worker.Worker.Devices[0].Name = "NVIDIA A100-SXM4-40GB" }, ""},
		"a model without MIG":           {func(w *state.WorkerGPUs) { w.Worker.Worker.Devices[0].Name = "NVIDIA L4" }, ""},
		"a worker no task could run on": {func(w *state.WorkerGPUs) { w.Worker.Worker.ID = "w2" }, ""},
		"draining":                      {func(w *state.WorkerGPUs) { w.Worker.Worker.Status = state.WorkerDraining }, ""},
		"opted out":                     {func(w *state.WorkerGPUs) { w.Worker.Worker.Labels = map[string]string{Label: "off"} }, ""},
	} {
		t.Run(name, func(t *testing.T) {
			clk := clock.NewFake(start)
			p := New(Settings{Cluster: true, Window: time.Minute, MinInterval: 30 * time.Minute})
			w := node("w1", gpu("GPU-0", a100))
			c.edit(&w)
			fleet := []state.WorkerGPUs{w}
			step(t, p, clk, want3g, fleet)
			clk.Advance(time.Minute)
			if got := step(t, p, clk, want3g, fleet); got != c.want {
				t.Fatalf("%q, want %q", got, c.want)
			}
		})
	}
}

// Without the cluster setting only a worker labelled on takes part.
func TestWorkersOptIn(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC))
	p := New(Settings{Window: time.Minute})
	off, on := node("a", gpu("GPU-a", a100)), node("b", gpu("GPU-b", a100))
	on.Worker.Worker.Labels = map[string]string{Label: "on"}
	fleet := []state.WorkerGPUs{off, on}
	step(t, p, clk, want3g, fleet)
	clk.Advance(time.Minute)
	if got := step(t, p, clk, want3g, fleet); got != "b/GPU-b" {
		t.Fatalf("%q, want the opted-in worker's GPU", got)
	}
}
