//go:build cgo && linux

package nvmltest

import (
	"maps"
	"slices"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// nvLinks is what a device's NVLinks lead to, read through NVML as agent
// code would: links to each GPU peer (found by the remote PCI bus ID) and
// links to NVSwitches.
type nvLinks struct {
	peers    map[int]int
	switches int
}

func readNvLinks(t *testing.T, lib nvml.Interface, i int) (nvLinks, nvml.Return) {
	t.Helper()
	d := handle(t, lib, i)
	got := nvLinks{peers: map[int]int{}}
	for l := range nvml.NVLINK_MAX_LINKS {
		state, ret := lib.DeviceGetNvLinkState(d, l)
		if ret == nvml.ERROR_NOT_SUPPORTED && l == 0 {
			return got, ret
		}
		if ret != nvml.SUCCESS {
			break
		}
		if state != nvml.FEATURE_ENABLED {
			continue
		}
		remote, ret := d.GetNvLinkRemoteDeviceType(l)
		if ret != nvml.SUCCESS {
			t.Fatalf("GPU %d link %d: remote type %v", i, l, ret)
		}
		switch remote {
		case nvml.NVLINK_DEVICE_TYPE_SWITCH:
			got.switches++
		case nvml.NVLINK_DEVICE_TYPE_GPU:
			pci, ret := d.GetNvLinkRemotePciInfo(l)
			if ret != nvml.SUCCESS {
				t.Fatalf("GPU %d link %d: remote PCI %v", i, l, ret)
			}
			peer, ret := lib.DeviceGetHandleByPciBusId(busID(pci))
			if ret != nvml.SUCCESS {
				t.Fatalf("GPU %d link %d: no device at %q", i, l, busID(pci))
			}
			idx, _ := peer.GetIndex()
			got.peers[idx]++
		default:
			t.Fatalf("GPU %d link %d: remote type %d", i, l, remote)
		}
	}
	return got, nvml.SUCCESS
}

// busID is the PCI bus ID string in p.
func busID(p nvml.PciInfo) string {
	b := make([]byte, 0, len(p.BusId))
	for _, c := range p.BusId {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}

func TestTopologyPresets(t *testing.T) {
	twoNodes := func(i int) int { return i / 4 }
	oneNode := func(int) int { return 0 }
	tests := []struct {
		topology Topology
		numa     func(i int) int
		// links is what GPU i's NVLinks lead to on machine; ok false
		// means the GPU has no NVLink.
		links func(machine string, i int) (want nvLinks, ok bool)
	}{
		{TopologyNVSwitch, twoNodes, func(machine string, i int) (nvLinks, bool) {
			return nvLinks{peers: map[int]int{}, switches: machines[machine].switchLinks}, true
		}},
		{TopologyDGX1, twoNodes, func(_ string, i int) (nvLinks, bool) {
			peers := map[int]int{}
			for _, p := range dgx1Links {
				switch i {
				case p.a:
					peers[p.b] = p.links
				case p.b:
					peers[p.a] = p.links
				}
			}
			return nvLinks{peers: peers}, true
		}},
		{TopologyNVLinkPairs, oneNode, func(_ string, i int) (nvLinks, bool) {
			return nvLinks{peers: map[int]int{i ^ 1: 4}}, true
		}},
		{TopologyPCIeOnly, oneNode, func(string, int) (nvLinks, bool) { return nvLinks{}, false }},
		{TopologyTwoNUMA, twoNodes, func(string, int) (nvLinks, bool) { return nvLinks{}, false }},
	}
	for _, tt := range tests {
		for _, machine := range Machines() {
			t.Run(tt.topology.String()+"/"+machine, func(t *testing.T) {
				m := New(machine, WithTopology(tt.topology))
				lib := m.Interface()
				for i := range m.Count() {
					di := handle(t, lib, i)
					if node, ret := di.GetNumaNodeId(); ret != nvml.SUCCESS || node != tt.numa(i) {
						t.Errorf("GPU %d: NUMA node %d %v, want %d", i, node, ret, tt.numa(i))
					}
					for j := range m.Count() {
						dj := handle(t, lib, j)
						ij, ret1 := lib.DeviceGetTopologyCommonAncestor(di, dj)
						ji, ret2 := di.GetTopologyCommonAncestor(dj)
						if ret1 != nvml.SUCCESS || ret2 != nvml.SUCCESS {
							t.Fatalf("GPU %d-%d: %v %v", i, j, ret1, ret2)
						}
						if rev, _ := dj.GetTopologyCommonAncestor(di); ij != ji || ij != rev {
							t.Errorf("GPU %d-%d: ancestors %d, %d, reverse %d", i, j, ij, ji, rev)
						}
						if want := wantAncestor(i, j, tt.numa); ij != want {
							t.Errorf("GPU %d-%d: ancestor %d, want %d", i, j, ij, want)
						}
					}
					got, ret := readNvLinks(t, lib, i)
					want, ok := tt.links(machine, i)
					switch {
					case !ok && ret != nvml.ERROR_NOT_SUPPORTED:
						t.Errorf("GPU %d: NVLink state %v, want ERROR_NOT_SUPPORTED", i, ret)
					case ok && (got.switches != want.switches || !maps.Equal(got.peers, want.peers)):
						t.Errorf("GPU %d: links %+v, want %+v", i, got, want)
					}
				}
			})
		}
	}
}

// wantAncestor is the common ancestor every preset gives GPUs i and j.
func wantAncestor(i, j int, numa func(int) int) nvml.GpuTopologyLevel {
	switch {
	case i == j:
		return nvml.TOPOLOGY_INTERNAL
	case i/2 == j/2:
		return nvml.TOPOLOGY_SINGLE
	case numa(i) == numa(j):
		return nvml.TOPOLOGY_HOSTBRIDGE
	}
	return nvml.TOPOLOGY_SYSTEM
}

// TestDGX1HybridCubeMesh checks the properties of the DGX-1 layout itself:
// six links per GPU to four peers, symmetric, 24 links in all.
func TestDGX1HybridCubeMesh(t *testing.T) {
	m := New(DGXA100, WithTopology(TopologyDGX1))
	lib := m.Interface()
	all := map[int]nvLinks{}
	total := 0
	for i := range m.Count() {
		all[i], _ = readNvLinks(t, lib, i)
		links := 0
		for _, n := range all[i].peers {
			links += n
		}
		if links != 6 || len(all[i].peers) != 4 {
			t.Errorf("GPU %d: %d links to %d peers, want 6 to 4", i, links, len(all[i].peers))
		}
		if all[i].peers[i^4] == 0 {
			t.Errorf("GPU %d: no link to GPU %d in the other quad", i, i^4)
		}
		total += links
	}
	for i, l := range all {
		for j, n := range l.peers {
			if all[j].peers[i] != n {
				t.Errorf("GPU %d has %d links to %d, which has %d back", i, n, j, all[j].peers[i])
			}
		}
	}
	if total != 2*24 {
		t.Errorf("%d link ends, want 48", total)
	}
}

func TestTopologyNearestGpus(t *testing.T) {
	m := New(DGXH100, WithTopology(TopologyDGX1))
	lib := m.Interface()
	tests := []struct {
		level nvml.GpuTopologyLevel
		want  []int
	}{
		{nvml.TOPOLOGY_INTERNAL, nil},
		{nvml.TOPOLOGY_SINGLE, []int{1}},
		{nvml.TOPOLOGY_HOSTBRIDGE, []int{1, 2, 3}},
		{nvml.TOPOLOGY_SYSTEM, []int{1, 2, 3, 4, 5, 6, 7}},
	}
	for _, tt := range tests {
		near, ret := lib.DeviceGetTopologyNearestGpus(handle(t, lib, 0), tt.level)
		if ret != nvml.SUCCESS {
			t.Fatalf("level %d: %v", tt.level, ret)
		}
		var got []int
		for _, d := range near {
			i, _ := d.GetIndex()
			got = append(got, i)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("level %d: %v, want %v", tt.level, got, tt.want)
		}
	}
}

func TestCustomTopology(t *testing.T) {
	tests := []struct {
		name string
		set  func(m *Machine)
		call func(t *testing.T, lib nvml.Interface) (any, nvml.Return)
		want any
		ret  nvml.Return
	}{
		{"ancestor unset", func(*Machine) {}, func(t *testing.T, lib nvml.Interface) (any, nvml.Return) {
			return lib.DeviceGetTopologyCommonAncestor(handle(t, lib, 0), handle(t, lib, 1))
		}, nvml.GpuTopologyLevel(0), nvml.ERROR_NOT_SUPPORTED},
		{"ancestor with itself", func(*Machine) {}, func(t *testing.T, lib nvml.Interface) (any, nvml.Return) {
			return lib.DeviceGetTopologyCommonAncestor(handle(t, lib, 2), handle(t, lib, 2))
		}, nvml.TOPOLOGY_INTERNAL, nvml.SUCCESS},
		{"ancestor set", func(m *Machine) { m.SetCommonAncestor(5, 0, nvml.TOPOLOGY_NODE) },
			func(t *testing.T, lib nvml.Interface) (any, nvml.Return) {
				return handle(t, lib, 0).GetTopologyCommonAncestor(handle(t, lib, 5))
			}, nvml.TOPOLOGY_NODE, nvml.SUCCESS},
		{"NVLink unset", func(*Machine) {}, func(t *testing.T, lib nvml.Interface) (any, nvml.Return) {
			return handle(t, lib, 0).GetNvLinkState(0)
		}, nvml.EnableState(0), nvml.ERROR_NOT_SUPPORTED},
		{"NVLink down", func(m *Machine) {
			m.SetTopology(TopologyNVSwitch)
			m.SetNvLinkState(1, 3, false)
		}, func(t *testing.T, lib nvml.Interface) (any, nvml.Return) {
			return handle(t, lib, 1).GetNvLinkState(3)
		}, nvml.FEATURE_DISABLED, nvml.SUCCESS},
		{"NVLink past the last", func(m *Machine) { m.SetTopology(TopologyNVSwitch) },
			func(t *testing.T, lib nvml.Interface) (any, nvml.Return) {
				return handle(t, lib, 1).GetNvLinkState(12)
			}, nvml.EnableState(0), nvml.ERROR_INVALID_ARGUMENT},
		{"custom NVLink", func(m *Machine) {
			m.SetNvLinks(6, NvLink{Peer: 7}, NvLink{Remote: nvml.NVLINK_DEVICE_TYPE_SWITCH, Peer: 1})
		}, func(t *testing.T, lib nvml.Interface) (any, nvml.Return) {
			return handle(t, lib, 6).GetNvLinkRemoteDeviceType(1)
		}, nvml.NVLINK_DEVICE_TYPE_SWITCH, nvml.SUCCESS},
		{"NUMA unset", func(*Machine) {}, func(t *testing.T, lib nvml.Interface) (any, nvml.Return) {
			return handle(t, lib, 0).GetNumaNodeId()
		}, 0, nvml.ERROR_NOT_SUPPORTED},
		{"NUMA set", func(m *Machine) { m.SetNumaNode(All, 3) }, func(t *testing.T, lib nvml.Interface) (any, nvml.Return) {
			return lib.DeviceGetNumaNodeId(handle(t, lib, 7))
		}, 3, nvml.SUCCESS},
		{"PCI bus ID", func(*Machine) {}, func(t *testing.T, lib nvml.Interface) (any, nvml.Return) {
			p, ret := handle(t, lib, 3).GetPciInfo()
			return busID(p), ret
		}, "0000:03:00.0", nvml.SUCCESS},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(DGXA100)
			tt.set(m)
			got, ret := tt.call(t, m.Interface())
			if ret != tt.ret || got != tt.want {
				t.Errorf("got %v %v, want %v %v", got, ret, tt.want, tt.ret)
			}
		})
	}
}
