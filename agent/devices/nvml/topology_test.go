//go:build cgo && linux

package nvml

import (
	"testing"

	"github.com/gpulayer/gpulayer/agent/devices/nvml/nvmltest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// The topology read from each of the fixture's machines: the path (and
// NVLink count) between chosen pairs of GPUs, and NUMA nodes.
func TestTopologyDiscovery(t *testing.T) {
	type pair struct {
		i, j    int
		path    string
		nvlinks int
	}
	cases := []struct {
		name  string
		topo  nvmltest.Topology
		pairs []pair
		numa  [2]int // of GPUs 0 and 7
	}{
		{"NVSwitch (DGX H100)", nvmltest.TopologyNVSwitch, []pair{{0, 1, api.PathNVSwitch, 18}, {0, 7, api.PathNVSwitch, 18}}, [2]int{0, 1}},
		{"DGX-1 hybrid cube mesh", nvmltest.TopologyDGX1, []pair{{0, 3, api.PathNvLink, 2}, {0, 1, api.PathNvLink, 1}, {0, 4, api.PathNvLink, 2}, {2, 6, api.PathNvLink, 1}, {0, 5, api.PathSys, 0}, {1, 3, api.PathNvLink, 1}}, [2]int{0, 1}},
		{"NVLink-bridged pairs", nvmltest.TopologyNVLinkPairs, []pair{{0, 1, api.PathNvLink, 4}, {0, 2, api.PathPHB, 0}, {6, 7, api.PathNvLink, 4}}, [2]int{0, 0}},
		{"PCIe only", nvmltest.TopologyPCIeOnly, []pair{{0, 1, api.PathPIX, 0}, {0, 2, api.PathPHB, 0}, {3, 7, api.PathPHB, 0}}, [2]int{0, 0}},
		{"two NUMA nodes", nvmltest.TopologyTwoNUMA, []pair{{0, 1, api.PathPIX, 0}, {0, 3, api.PathPHB, 0}, {0, 4, api.PathSys, 0}}, [2]int{0, 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := nvmltest.New("dgxh100", nvmltest.StableUUIDs(), nvmltest.WithTopology(c.topo))
			src, err := OpenInterface(t.Context(), nil, m.Interface())
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			devs, err := src.Devices(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			link := func(i, j int) (api.DeviceLink, bool) {
				for _, l := range devs[i].Links {
					if l.Peer == devs[j].UUID {
						return l, true
					}
				}
				return api.DeviceLink{}, false
			}
			for _, p := range c.pairs {
				for _, dir := range [][2]int{{p.i, p.j}, {p.j, p.i}} {
					l, ok := link(dir[0], dir[1])
					if !ok || l.Path != p.path || l.NvLinks != p.nvlinks {
						t.Errorf("GPU %d to %d: %+v (found %v), want %s with %d NVLinks", dir[0], dir[1], l, ok, p.path, p.nvlinks)
					}
				}
			}
			for k, i := range []int{0, 7} {
				if n := devs[i].NUMANode; n == nil || *n != c.numa[k] {
					t.Errorf("GPU %d NUMA node %v, want %d", i, n, c.numa[k])
				}
			}
			if len(devs[0].Links) != len(devs)-1 {
				t.Errorf("GPU 0 has %d links, want one to each of the %d others", len(devs[0].Links), len(devs)-1)
			}
			again, err := src.Devices(t.Context())
			if err != nil || !again[0].Equal(devs[0]) {
				t.Errorf("a second read differs: %v", err)
			}
		})
	}
}
