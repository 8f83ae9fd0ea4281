package container

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	specs "tags.cncf.io/container-device-interface/specs-go"

	"github.com/gpulayer/gpulayer/agent/gpucdi"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/executor"
)

// writeSpec writes the agent's spec for devs (all device files present)
// into a fresh directory and returns it.
func writeSpec(t *testing.T, inv gpucdi.Inventory) string {
	t.Helper()
	if inv.Exists == nil {
		inv.Exists = func(string) bool { return true }
	}
	spec, err := gpucdi.Build(inv)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := gpucdi.Write(dir, "gpulayer.json", spec); err != nil {
		t.Fatal(err)
	}
	return dir
}

// On a daemon without CDI, the task's devices become the spec's edits in
// the host config: its GPU's device file and the control files as device
// mappings, the share's MPS directory as a bind mount, the device env in
// the container's environment under Task.Env; a MIG device brings its
// GPU's file.
func TestTranslateAppliesCDIEditsToTheHostConfig(t *testing.T) {
	dir := writeSpec(t, gpucdi.Inventory{
		Devices: []api.Device{{UUID: "GPU-a", Healthy: true}, {UUID: "GPU-b", Healthy: true, MIGEnabled: true}, {UUID: "MIG-b1", Healthy: true, Parent: "GPU-b"}},
		Nodes:   map[string]string{"GPU-a": "/dev/nvidia0", "GPU-b": "/dev/nvidia1"},
		Shares:  []gpucdi.Share{{AttemptID: "att1", GPU: "GPU-a", Env: map[string]string{"GPULAYER_GPU_MEMORY_MIB": "512"}, MPSPipeDir: "/run/mps"}},
	})
	task := executor.Task{ID: "att1", Devices: []string{"GPU-a"}, Env: map[string]string{
		executor.EnvCDIDir:     dir,
		executor.EnvCDIDevices: gpucdi.Qualified(gpucdi.ShareName("GPU-a", "att1")),
		"CUDA_VISIBLE_DEVICES": "GPU-a",
	}}
	p, err := planGPUs(task, false)
	if err != nil {
		t.Fatal(err)
	}
	hc := &container.HostConfig{}
	p.apply(hc)
	var paths []string
	for _, d := range hc.Devices {
		paths = append(paths, d.PathOnHost+">"+d.PathInContainer+":"+d.CgroupPermissions)
	}
	want := []string{"/dev/nvidiactl>/dev/nvidiactl:rwm", "/dev/nvidia-uvm>/dev/nvidia-uvm:rwm", "/dev/nvidia-uvm-tools>/dev/nvidia-uvm-tools:rwm", "/dev/nvidia0>/dev/nvidia0:rwm"}
	if !slices.Equal(paths, want) {
		t.Errorf("devices %v, want %v", paths, want)
	}
	if len(hc.Mounts) != 1 || hc.Mounts[0] != (mount.Mount{Type: mount.TypeBind, Source: "/run/mps", Target: "/run/mps"}) {
		t.Errorf("mounts %+v", hc.Mounts)
	}
	if len(hc.DeviceRequests) != 0 {
		t.Errorf("device requests %+v on a daemon without CDI", hc.DeviceRequests)
	}
	env := taskEnv(api.ContainerConfig{Env: map[string]string{"GPULAYER_GPU_MEMORY_MIB": "99999", "A": "1"}}, p, task)
	for _, kv := range []string{"GPULAYER_GPU_MEMORY_MIB=512", "NVIDIA_VISIBLE_DEVICES=GPU-a", "CUDA_VISIBLE_DEVICES=GPU-a", "A=1"} {
		if !slices.Contains(env, kv) {
			t.Errorf("env %v lacks %s", env, kv)
		}
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, "GPULAYER_CDI_") || strings.HasPrefix(kv, executor.EnvSandbox) {
			t.Errorf("env passes on the agent's instruction %s", kv)
		}
	}

	mig := executor.Task{Devices: []string{"MIG-b1"}, Env: map[string]string{executor.EnvCDIDir: dir}}
	p, err = planGPUs(mig, false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(p.Devices, func(d container.DeviceMapping) bool { return d.PathOnHost == "/dev/nvidia1" }) || !slices.Contains(p.Env, "CUDA_VISIBLE_DEVICES=MIG-b1") {
		t.Errorf("MIG plan %+v", p)
	}
}

// On a daemon that resolves CDI itself the names go as a cdi device
// request and nothing is translated here.
func TestTranslatePassesCDINamesToADaemonWithCDI(t *testing.T) {
	task := executor.Task{Devices: []string{"GPU-a", "GPU-b"}, Env: map[string]string{executor.EnvCDIDir: "/nonexistent"}}
	p, err := planGPUs(task, true)
	if err != nil {
		t.Fatal(err)
	}
	hc := &container.HostConfig{}
	p.apply(hc)
	want := []container.DeviceRequest{{Driver: "cdi", DeviceIDs: []string{"gpulayer.io/gpu=GPU-a", "gpulayer.io/gpu=GPU-b"}}}
	if len(hc.DeviceRequests) != 1 || hc.DeviceRequests[0].Driver != "cdi" || !slices.Equal(hc.DeviceRequests[0].DeviceIDs, want[0].DeviceIDs) {
		t.Errorf("device requests %+v, want %+v", hc.DeviceRequests, want)
	}
	if len(hc.Devices) != 0 || len(hc.Mounts) != 0 {
		t.Errorf("translated edits on a CDI daemon: %+v", hc)
	}
}

// The daemon resolves names only from API 1.44 with the agent's
// directory among its CDI spec directories.
func TestDaemonResolvesCDI(t *testing.T) {
	cases := []struct {
		api  string
		dirs []string
		want bool
	}{
		{"1.41", []string{"/var/run/cdi"}, false},
		{"1.44", nil, false},
		{"1.44", []string{"/etc/cdi"}, false},
		{"1.44", []string{"/etc/cdi", "/var/run/cdi/"}, true},
		{"1.51", []string{"/var/run/cdi"}, true},
	}
	for _, c := range cases {
		if got := daemonResolvesCDI(c.api, c.dirs, "/var/run/cdi"); got != c.want {
			t.Errorf("api %s dirs %v: %v, want %v", c.api, c.dirs, got, c.want)
		}
	}
}

// A device in no spec, and edits Docker's API cannot carry, are refused
// rather than dropped.
func TestTranslateRefusesWhatItCannotApply(t *testing.T) {
	dir := writeSpec(t, gpucdi.Inventory{Devices: []api.Device{{UUID: "GPU-a", Healthy: true}}})
	if _, err := planGPUs(executor.Task{Devices: []string{"GPU-zzz"}, Env: map[string]string{executor.EnvCDIDir: dir}}, false); err == nil || !strings.Contains(err.Error(), "GPU-zzz") {
		t.Errorf("unknown device: %v", err)
	}
	for name, e := range map[string]specs.ContainerEdits{
		"hook":  {Hooks: []*specs.Hook{{HookName: "createContainer", Path: "/bin/true"}}},
		"tmpfs": {Mounts: []*specs.Mount{{HostPath: "tmpfs", ContainerPath: "/x", Type: "tmpfs"}}},
		"net":   {NetDevices: []*specs.LinuxNetDevice{{HostInterfaceName: "eth0", Name: "eth1"}}},
	} {
		if _, err := translateEdits(e); err == nil {
			t.Errorf("%s: translated", name)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "gpulayer.json")); err != nil {
		t.Fatal(err)
	}
}
