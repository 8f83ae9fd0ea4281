//go:build cgo && linux

package nvml

import (
	"testing"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpulayer/gpulayer/agent/devices/nvml/nvmltest"
)

// A GPU in MIG mode is reported as such, followed by its MIG devices
// (MIG-... UUIDs, their memory and profile, the GPU as parent); the other
// GPUs are whole; topology links only whole GPUs; a MIG device that
// cannot be read is reported unhealthy.
func TestMIGDevicesAreReportedUnderTheirGPU(t *testing.T) {
	m := nvmltest.New(nvmltest.DGXA100, nvmltest.StableUUIDs(), nvmltest.WithTopology(nvmltest.TopologyNVSwitch))
	m.SetMIGDevices(1,
		nvmltest.MIGDevice{UUID: "MIG-11111111-1111-1111-1111-111111111111", Profile: "3g.20gb", MemoryMiB: 19968, GPUInstance: 1, ComputeInstance: 0},
		nvmltest.MIGDevice{UUID: "MIG-22222222-2222-2222-2222-222222222222", Profile: "1g.5gb", MemoryMiB: 4864, GPUInstance: 2, ComputeInstance: 0},
	)
	src, err := OpenInterface(t.Context(), nil, m.Interface())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	devs, err := src.Devices(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != 10 {
		t.Fatalf("%d devices, want 8 GPUs and 2 MIG devices", len(devs))
	}
	gpu1 := devs[1]
	if !gpu1.MIGEnabled || gpu1.Parent != "" || !gpu1.Healthy {
		t.Fatalf("GPU 1: %+v, want in MIG mode", gpu1)
	}
	for k, want := range []struct {
		uuid, profile string
		mib           uint64
	}{{"MIG-11111111-1111-1111-1111-111111111111", "3g.20gb", 19968}, {"MIG-22222222-2222-2222-2222-222222222222", "1g.5gb", 4864}} {
		d := devs[2+k]
		if d.UUID != want.uuid || d.MIGProfile != want.profile || d.MemoryMiB != want.mib || d.Parent != gpu1.UUID || d.Index != 1 || !d.Healthy || d.MIGEnabled || len(d.Links) != 0 {
			t.Errorf("MIG device %d: %+v", k, d)
		}
		if d.Name != gpu1.Name+" MIG "+want.profile {
			t.Errorf("MIG device %d name %q", k, d.Name)
		}
	}
	for _, d := range append(devs[:2:2], devs[4:]...) {
		if d.Parent != "" || (d.UUID != gpu1.UUID && d.MIGEnabled) {
			t.Errorf("GPU %d: %+v, want whole", d.Index, d)
		}
		for _, l := range d.Links {
			if l.Peer == devs[2].UUID || l.Peer == devs[3].UUID {
				t.Errorf("GPU %d links to a MIG device", d.Index)
			}
		}
	}
	if len(devs[0].Links) != 7 {
		t.Errorf("GPU 0 has %d links, want the 7 other GPUs", len(devs[0].Links))
	}

	// A GPU whose memory cannot be read is unhealthy, and its MIG
	// devices are not offered without it.
	m.Fail(1, "GetMemoryInfo", gonvml.ERROR_UNKNOWN, nvmltest.Always)
	devs, err = src.Devices(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	unhealthy := 0
	for _, d := range devs {
		if !d.Healthy {
			unhealthy++
		}
	}
	if devs[1].Healthy || unhealthy != 1 {
		t.Fatalf("with GPU 1's memory failing: %d unhealthy, GPU 1 %+v", unhealthy, devs[1])
	}

	// Out of MIG mode, GPU 1 is whole again.
	m.ClearFailures()
	m.SetMIGDevices(1)
	devs, _ = src.Devices(t.Context())
	if len(devs) != 8 || devs[1].MIGEnabled {
		t.Fatalf("after MIG mode off: %d devices, GPU 1 %+v", len(devs), devs[1])
	}
}

// The profile comes from the GPU instance's profile when the MIG device's
// name does not carry it.
func TestMIGProfileFromItsGPUInstance(t *testing.T) {
	cases := []struct {
		slices uint32
		mib    uint64
		want   string
	}{{1, 4864, "1g.5gb"}, {3, 19968, "3g.20gb"}, {7, 40192, "7g.40gb"}, {1, 9856, "1g.10gb"}}
	for _, c := range cases {
		got := profileName(gonvml.GpuInstanceProfileInfo{SliceCount: c.slices, MemorySizeMB: c.mib})
		if got != c.want {
			t.Errorf("%d slices, %d MB: %q, want %q", c.slices, c.mib, got, c.want)
		}
	}
}
