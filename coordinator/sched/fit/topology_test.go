package fit

import (
	"fmt"
	"slices"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// The fixtures are the five machines of agent/devices/nvml/nvmltest's
// topology presets, as an agent reports them: eight GPUs, GPUs 2k and
// 2k+1 behind one PCIe switch, GPUs 0-3 and 4-7 on their own NUMA node
// where the machine has two.
type fixture func(i, j int) command.DeviceLink

func pcie(twoNUMA bool) fixture {
	return func(i, j int) command.DeviceLink {
		switch {
		case i/2 == j/2:
			return command.DeviceLink{Path: api.PathPIX}
		case twoNUMA && i/4 != j/4:
			return command.DeviceLink{Path: api.PathSys}
		}
		return command.DeviceLink{Path: api.PathPHB}
	}
}

func nvswitch(i, j int) command.DeviceLink {
	return command.DeviceLink{Path: api.PathNVSwitch, NvLinks: 18}
}

func nvlinkPairs(i, j int) command.DeviceLink {
	if i/2 == j/2 {
		return command.DeviceLink{Path: api.PathNvLink, NvLinks: 4}
	}
	return command.DeviceLink{Path: api.PathPHB}
}

// dgx1 is the V100 hybrid cube mesh (nvmltest's dgx1Links).
func dgx1(i, j int) command.DeviceLink {
	links := map[[2]int]int{
		{0, 1}: 1, {0, 2}: 1, {0, 3}: 2, {1, 2}: 2, {1, 3}: 1, {2, 3}: 2,
		{4, 5}: 1, {4, 6}: 1, {4, 7}: 2, {5, 6}: 2, {5, 7}: 1, {6, 7}: 2,
		{0, 4}: 2, {1, 5}: 2, {2, 6}: 1, {3, 7}: 1,
	}
	if n := links[[2]int{min(i, j), max(i, j)}]; n > 0 {
		return command.DeviceLink{Path: api.PathNvLink, NvLinks: n}
	}
	return pcie(true)(i, j)
}

// machine is n GPUs whose links f describes (nil: no topology reported).
func machine(n int, f fixture) []command.Device {
	devs := make([]command.Device, n)
	for i := range devs {
		devs[i] = command.Device{Index: i, UUID: fmt.Sprintf("GPU-%02d", i), Name: "NVIDIA H100", MemoryMiB: 81559, Healthy: true}
	}
	for i := range devs {
		for j := range devs {
			if f != nil && i != j {
				l := f(i, j)
				l.Peer = devs[j].UUID
				devs[i].Links = append(devs[i].Links, l)
			}
		}
	}
	return devs
}

func indices(uuids []string) []int {
	out := make([]int, len(uuids))
	for i, u := range uuids {
		fmt.Sscanf(u, "GPU-%d", &out[i])
	}
	return out
}

// Golden choices: the best-connected free set, in chain order.
func TestTopologyAwarePlacement(t *testing.T) {
	cases := []struct {
		name string
		f    fixture
		busy []int
		k    int
		want []int
	}{
		{"NVSwitch: all equal, lowest first", nvswitch, nil, 4, []int{0, 1, 2, 3}},
		{"DGX-1: a fully connected quad, double links chained", dgx1, nil, 4, []int{0, 3, 2, 1}},
		{"DGX-1: with GPU 1 busy, the other quad", dgx1, []int{1}, 4, []int{4, 7, 6, 5}},
		{"DGX-1: a pair with two links", dgx1, nil, 2, []int{0, 3}},
		{"DGX-1: all eight, chained by links", dgx1, nil, 8, []int{0, 3, 2, 1, 5, 6, 7, 4}},
		{"NVLink pairs: a bridged pair", nvlinkPairs, nil, 2, []int{0, 1}},
		{"NVLink pairs: GPU 0 busy, the next bridged pair", nvlinkPairs, []int{0}, 2, []int{2, 3}},
		{"PCIe only: GPU 0 busy, a pair behind one switch", pcie(false), []int{0}, 2, []int{2, 3}},
		{"two NUMA nodes: GPU 0 busy, one node's four", pcie(true), []int{0}, 4, []int{4, 5, 6, 7}},
		{"two NUMA nodes: two, one switch", pcie(true), []int{0, 2}, 2, []int{4, 5}},
		{"no topology reported: index order", nil, []int{0}, 3, []int{1, 2, 3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var free []command.Device
			for _, d := range machine(8, c.f) {
				if !slices.Contains(c.busy, d.Index) {
					free = append(free, d)
				}
			}
			if got := indices(PickConnected(free, c.k)); !slices.Equal(got, c.want) {
				t.Fatalf("picked %v, want %v", got, c.want)
			}
		})
	}
}

func benchmarkPick(b *testing.B, n, k int, f fixture) {
	devs := machine(n, f)
	b.ResetTimer()
	for range b.N {
		PickConnected(devs, k)
	}
}

// Choosing 8 GPUs takes well under a millisecond (issue 13's bound).
func BenchmarkPick8Of8DGX1(b *testing.B)  { benchmarkPick(b, 8, 8, dgx1) }
func BenchmarkPick4Of8DGX1(b *testing.B)  { benchmarkPick(b, 8, 4, dgx1) }
func BenchmarkPick8Of16PCIe(b *testing.B) { benchmarkPick(b, 16, 8, pcie(true)) }
func BenchmarkPick8Of32PCIe(b *testing.B) { benchmarkPick(b, 32, 8, pcie(true)) }
