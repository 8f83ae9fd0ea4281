package agent

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"tags.cncf.io/container-device-interface/pkg/cdi"

	"github.com/gpulayer/gpulayer/agent/devices"
	"github.com/gpulayer/gpulayer/agent/gpucdi"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// The agent keeps its CDI spec in CDIDir: its healthy GPUs by UUID, which
// the CDI library loads; a GPU turning unhealthy leaves it; with none
// left the file goes. The runner's hook names an assignment's devices in
// the agent's kind and the directory; without CDIDir nothing is written
// or named.
func TestAgentKeepsItsCDISpec(t *testing.T) {
	devs := []api.Device{{Index: 0, UUID: "GPU-0", Healthy: true}, {Index: 1, UUID: "GPU-1", Healthy: true}}
	dir := t.TempDir()
	a := &Agent{cfg: Config{Devices: devices.Static(devs...), CDIDir: dir, DataDir: t.TempDir()}, log: slog.New(slog.DiscardHandler), devices: slices.Clone(devs)}
	a.refreshCDI()
	load := func() []string {
		t.Helper()
		c, err := cdi.NewCache(cdi.WithSpecDirs(dir), cdi.WithAutoRefresh(false))
		if err != nil {
			t.Fatal(err)
		}
		if errs := c.GetErrors(); len(errs) != 0 {
			t.Fatalf("CDI errors %v", errs)
		}
		return c.ListDevices()
	}
	if got := load(); !slices.Equal(got, []string{"gpulayer.io/gpu=GPU-0", "gpulayer.io/gpu=GPU-1"}) {
		t.Fatalf("devices %v", got)
	}
	names, gotDir := a.cdiFor(api.Assignment{AttemptID: "att1", Executor: "container", Devices: []string{"GPU-1"}})
	if !slices.Equal(names, []string{"gpulayer.io/gpu=GPU-1"}) || gotDir != dir {
		t.Errorf("hook: %v %q", names, gotDir)
	}
	shared := api.Assignment{AttemptID: "att2", Executor: "container", Devices: []string{"GPU-0"}, Resources: &api.Resources{GPUs: 1, GPUMemoryMiB: 1024, GPUSharing: api.SharingUnenforced}}
	if names, _ := a.cdiFor(shared); !slices.Equal(names, []string{gpucdi.Qualified(gpucdi.ShareName("GPU-0", "att2"))}) {
		t.Errorf("shared hook: %v", names)
	}

	if names, _ := a.cdiFor(api.Assignment{AttemptID: "att3", Executor: "exec", Devices: []string{"GPU-1"}}); names != nil {
		t.Errorf("an exec task is told CDI names %v", names)
	}

	a.mu.Lock()
	a.devices[0].Healthy = false
	a.mu.Unlock()
	a.refreshCDI()
	if got := load(); !slices.Equal(got, []string{"gpulayer.io/gpu=GPU-1"}) {
		t.Fatalf("after GPU-0 turned unhealthy: %v", got)
	}
	a.mu.Lock()
	a.devices[1].Healthy = false
	a.mu.Unlock()
	a.refreshCDI()
	if _, err := os.Stat(filepath.Join(dir, a.cdiFile())); !os.IsNotExist(err) {
		t.Errorf("spec with no healthy GPU: %v", err)
	}

	off := &Agent{cfg: Config{Devices: devices.Static(devs...)}, log: slog.New(slog.DiscardHandler), devices: devs}
	off.refreshCDI()
	if names, d := off.cdiFor(api.Assignment{Executor: "container", Devices: []string{"GPU-0"}}); names != nil || d != "" {
		t.Errorf("without CDIDir: %v %q", names, d)
	}
}
