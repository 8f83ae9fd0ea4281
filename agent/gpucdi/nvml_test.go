//go:build cgo && linux

package gpucdi

import (
	"testing"

	"github.com/gpulayer/gpulayer/agent/devices/nvml"
	"github.com/gpulayer/gpulayer/agent/devices/nvml/nvmltest"
)

// The spec of a DGX A100 from go-nvml's mock, GPU 1 in MIG mode with two
// MIG devices: seven whole GPUs with /dev/nvidia<minor> from NVML's minor
// numbers, the two MIG devices on GPU 1's file, nothing for GPU 1 whole;
// the CDI library validates it.
func TestBuildFromMockA100WithMIG(t *testing.T) {
	m := nvmltest.New(nvmltest.DGXA100, nvmltest.StableUUIDs())
	m.SetMIGDevices(1,
		nvmltest.MIGDevice{UUID: "MIG-11111111-1111-1111-1111-111111111111", Profile: "3g.20gb", MemoryMiB: 19968, GPUInstance: 1},
		nvmltest.MIGDevice{UUID: "MIG-22222222-2222-2222-2222-222222222222", Profile: "1g.5gb", MemoryMiB: 4864, GPUInstance: 2},
	)
	src, err := nvml.OpenInterface(t.Context(), nil, m.Interface())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	devs, err := src.Devices(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := src.DeviceNodes(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	spec, err := Build(Inventory{Devices: devs, Nodes: nodes, Exists: func(string) bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	c := loadSpec(t, spec)
	if got := len(c.ListDevices()); got != 9 {
		t.Fatalf("%d devices %v, want 7 whole GPUs and 2 MIG devices", got, c.ListDevices())
	}
	gpu1 := devs[1].UUID
	if c.GetDevice(Qualified(gpu1)) != nil {
		t.Errorf("GPU %s in MIG mode is offered whole", gpu1)
	}
	mig := c.GetDevice(Qualified("MIG-22222222-2222-2222-2222-222222222222"))
	if mig == nil || len(mig.ContainerEdits.DeviceNodes) != 1 || mig.ContainerEdits.DeviceNodes[0].Path != nodes[gpu1] {
		t.Fatalf("MIG device %+v, want GPU 1's file %s", mig, nodes[gpu1])
	}
	g0 := c.GetDevice(Qualified(devs[0].UUID))
	if g0 == nil || len(g0.ContainerEdits.DeviceNodes) != 1 || g0.ContainerEdits.DeviceNodes[0].Path != nodes[devs[0].UUID] || nodes[devs[0].UUID] == "" {
		t.Fatalf("GPU 0 %+v, nodes %v", g0, nodes)
	}
}
