package gpucdi

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tags.cncf.io/container-device-interface/pkg/cdi"
	specs "tags.cncf.io/container-device-interface/specs-go"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// loadSpec writes spec into a fresh directory and reads it back through
// the CDI library's cache, failing the test on any error the library
// finds in it.
func loadSpec(t *testing.T, spec *specs.Spec) *cdi.Cache {
	t.Helper()
	dir := t.TempDir()
	if _, err := Write(dir, "gpulayer.json", spec); err != nil {
		t.Fatal(err)
	}
	if _, err := cdi.ReadSpec(filepath.Join(dir, "gpulayer.json"), 0); err != nil {
		t.Fatalf("the CDI library refuses the spec: %v", err)
	}
	cache, err := cdi.NewCache(cdi.WithSpecDirs(dir), cdi.WithAutoRefresh(false))
	if err != nil {
		t.Fatal(err)
	}
	if errs := cache.GetErrors(); len(errs) != 0 {
		t.Fatalf("the CDI cache reports %v", errs)
	}
	return cache
}

func envOf(t *testing.T, c *cdi.Cache, name string) []string {
	t.Helper()
	d := c.GetDevice(Qualified(name))
	if d == nil {
		t.Fatalf("no device %s in %v", Qualified(name), c.ListDevices())
	}
	return d.ContainerEdits.Env
}

// Whole GPUs and MIG devices get a device each, by UUID, with their GPU's
// device file; a GPU in MIG mode and an unhealthy GPU get none; a share
// carries its memory limit and MPS directory; control nodes present on
// the host go into the common edits; the CDI library validates it all.
func TestBuildDescribesGPUsMIGDevicesAndShares(t *testing.T) {
	inv := Inventory{
		Devices: []api.Device{
			{UUID: "GPU-a", Healthy: true},
			{UUID: "GPU-b", Healthy: true, MIGEnabled: true},
			{UUID: "MIG-b1", Healthy: true, Parent: "GPU-b", MIGProfile: "1g.10gb"},
			{UUID: "GPU-c", Healthy: false, Health: "unhealthy"},
		},
		Nodes: map[string]string{"GPU-a": "/dev/nvidia0", "GPU-b": "/dev/nvidia1", "GPU-c": "/dev/nvidia2"},
		Shares: []Share{
			{AttemptID: "att/1", GPU: "GPU-a", Env: map[string]string{"GPULAYER_GPU_MEMORY_MIB": "2048"}, MPSPipeDir: "/run/mps"},
			{AttemptID: "att-2", GPU: "GPU-c", Env: map[string]string{"GPULAYER_GPU_MEMORY_MIB": "1024"}},
		},
		Exists: func(p string) bool { return p != "/dev/nvidia-uvm-tools" },
	}
	spec, err := Build(inv)
	if err != nil {
		t.Fatal(err)
	}
	if spec.Kind != Kind {
		t.Errorf("kind %q", spec.Kind)
	}
	c := loadSpec(t, spec)
	want := []string{Qualified("GPU-a"), Qualified("GPU-a-share-att_1"), Qualified("MIG-b1")}
	if got := c.ListDevices(); !slices.Equal(got, want) {
		t.Fatalf("devices %v, want %v", got, want)
	}
	if got := envOf(t, c, "MIG-b1"); !slices.Equal(got, []string{"CUDA_VISIBLE_DEVICES=MIG-b1", "NVIDIA_VISIBLE_DEVICES=MIG-b1"}) {
		t.Errorf("MIG env %v", got)
	}
	if n := c.GetDevice(Qualified("MIG-b1")).ContainerEdits.DeviceNodes; len(n) != 1 || n[0].Path != "/dev/nvidia1" {
		t.Errorf("MIG device nodes %+v, want its GPU's", n)
	}
	share := c.GetDevice(Qualified(ShareName("GPU-a", "att/1")))
	if env := share.ContainerEdits.Env; !slices.Contains(env, "GPULAYER_GPU_MEMORY_MIB=2048") || !slices.Contains(env, "CUDA_VISIBLE_DEVICES=GPU-a") {
		t.Errorf("share env %v", env)
	}
	if m := share.ContainerEdits.Mounts; len(m) != 1 || m[0].HostPath != "/run/mps" || m[0].ContainerPath != "/run/mps" {
		t.Errorf("share mounts %+v", m)
	}
	var common []string
	for _, n := range spec.ContainerEdits.DeviceNodes {
		common = append(common, n.Path)
	}
	if !slices.Equal(common, []string{"/dev/nvidiactl", "/dev/nvidia-uvm"}) {
		t.Errorf("common nodes %v", common)
	}
}

// Device files the host lacks are left out rather than named; with no
// healthy GPU there is nothing to write.
func TestBuildLeavesOutMissingFilesAndRefusesEmpty(t *testing.T) {
	spec, err := Build(Inventory{
		Devices: []api.Device{{UUID: "GPU-a", Healthy: true}},
		Nodes:   map[string]string{"GPU-a": "/dev/nvidia0"},
		Exists:  func(string) bool { return false },
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := spec.Devices[0].ContainerEdits.DeviceNodes; len(n) != 0 || len(spec.ContainerEdits.DeviceNodes) != 0 {
		t.Errorf("nodes %+v and %+v for files that are not there", n, spec.ContainerEdits.DeviceNodes)
	}
	loadSpec(t, spec)
	if _, err := Build(Inventory{Devices: []api.Device{{UUID: "GPU-a"}}}); !errors.Is(err, ErrEmpty) {
		t.Errorf("all unhealthy: %v, want ErrEmpty", err)
	}
}

// Write replaces the file whole, leaves no temporary file behind, skips
// an unchanged spec and refuses a name that is not a plain .json name.
func TestWriteIsAtomicAndSkipsUnchanged(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cdi")
	spec, err := Build(Inventory{Devices: []api.Device{{UUID: "GPU-a", Healthy: true}}, Exists: func(string) bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, false} {
		changed, err := Write(dir, "g.json", spec)
		if err != nil || changed != want {
			t.Fatalf("write %d: changed %v err %v, want changed %v", i, changed, err, want)
		}
	}
	spec.Devices = append(spec.Devices, specs.Device{Name: "GPU-b", ContainerEdits: specs.ContainerEdits{Env: []string{"A=1"}}})
	if changed, err := Write(dir, "g.json", spec); err != nil || !changed {
		t.Fatalf("changed spec: %v %v", changed, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "g.json" {
		t.Errorf("dir holds %v", entries)
	}
	b, err := os.ReadFile(filepath.Join(dir, "g.json"))
	if err != nil || !strings.Contains(string(b), "GPU-b") {
		t.Errorf("file %s %v", b, err)
	}
	for _, bad := range []string{"../g.json", "g.yaml", "a/g.json", ""} {
		if _, err := Write(dir, bad, spec); err == nil {
			t.Errorf("name %q accepted", bad)
		}
	}
	if err := Remove(dir, "g.json"); err != nil {
		t.Fatal(err)
	}
	if err := Remove(dir, "g.json"); err != nil {
		t.Errorf("removing a missing spec: %v", err)
	}
}
