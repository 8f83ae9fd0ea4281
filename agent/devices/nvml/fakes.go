package nvml

import (
	"maps"
	"slices"
)

// Names of the fake GPU sets accepted by OpenFake. Each is one of go-nvml's
// mock DGX servers: eight identical GPUs.
const (
	FakeDGXA100 = "dgxa100"
	FakeDGXH100 = "dgxh100"
	FakeDGXH200 = "dgxh200"
	FakeDGXB200 = "dgxb200"
)

// fakeSpec describes what one go-nvml mock server reports. In cgo builds
// the mock server itself is read and this table only names the sets (a cgo
// test checks the table against the mocks); in builds without cgo the table
// is the fake, since the mocks cannot be compiled there.
type fakeSpec struct {
	count             int
	name              string
	memoryMiB         uint64
	computeCapability string
	driverVersion     string
	cudaVersion       string
	pciDevice         string
}

var fakeSpecs = map[string]fakeSpec{
	// go-nvml v0.13.4-1 really names this one "Mock NVIDIA …".
	FakeDGXA100: {8, "Mock NVIDIA A100-SXM4-40GB", 40960, "8.0", "550.54.15", "12.4", "10de:20b0"},
	FakeDGXH100: {8, "NVIDIA H100 80GB HBM3", 81920, "9.0", "550.54.15", "12.4", "10de:2330"},
	FakeDGXH200: {8, "NVIDIA H200 141GB HBM3e", 144384, "9.0", "550.54.15", "12.4", "10de:2333"},
	FakeDGXB200: {8, "NVIDIA B200 180GB HBM3e", 184320, "10.0", "560.28.03", "12.6", "10de:2b00"},
}

// FakeNames lists the names OpenFake accepts, sorted.
func FakeNames() []string {
	return slices.Sorted(maps.Keys(fakeSpecs))
}
