//go:build cgo && linux

package nvmltest

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// Topology is a preset of common PCIe ancestors, NVLinks and NUMA nodes
// for the whole machine; SetTopology applies it.
//
// Every preset uses the same PCIe tree: GPUs 2k and 2k+1 share a PCIe
// switch (nvml.TOPOLOGY_SINGLE), GPUs on the same NUMA node share a host
// bridge (nvml.TOPOLOGY_HOSTBRIDGE), and GPUs on different NUMA nodes meet
// only at the system level (nvml.TOPOLOGY_SYSTEM). The presets differ in
// their NVLinks and NUMA nodes; "first half" below means GPUs 0-3 of the
// eight every machine has.
type Topology int

const (
	// TopologyNVSwitch is a DGX with an NVSwitch fabric: every GPU's
	// NVLinks all lead to NVSwitch chips (NVLINK_DEVICE_TYPE_SWITCH), so
	// every pair of GPUs is connected. Links per GPU and switch chips are
	// the real machine's: 12 links over 6 switches on DGX A100, 18 over 4
	// on DGX H100 and H200, 18 over 2 on DGX B200; link l leads to switch
	// l mod switches. NUMA: first half node 0, second half node 1.
	TopologyNVSwitch Topology = iota + 1

	// TopologyDGX1 is the hybrid cube mesh of the DGX-1 with V100 GPUs:
	// six NVLinks per GPU, to four peers. GPUs 0-3 and 4-7 form two fully
	// connected quads, and GPU i is also linked to GPU i+4. Within each
	// quad the pairs 0-3, 1-2 and 2-3 (4-7, 5-6 and 6-7) have two links
	// and the others one; between the quads 0-4 and 1-5 have two links,
	// 2-6 and 3-7 one (see dgx1Links). Links are numbered in that table's
	// order. NUMA: first half node 0, second half node 1. It needs
	// exactly eight GPUs.
	TopologyDGX1

	// TopologyNVLinkPairs is PCIe GPUs joined in pairs by NVLink bridges:
	// GPUs 2k and 2k+1 have four NVLinks to each other and none to any
	// other GPU. NUMA: all on node 0.
	TopologyNVLinkPairs

	// TopologyPCIeOnly is GPUs without NVLink in a single-socket host:
	// every NVLink query returns nvml.ERROR_NOT_SUPPORTED. NUMA: all on
	// node 0.
	TopologyPCIeOnly

	// TopologyTwoNUMA is GPUs without NVLink in a two-socket host. NUMA:
	// first half node 0, second half node 1.
	TopologyTwoNUMA
)

// pairLinks is how many NVLinks join the GPU pair (a, b) in a DGX-1.
type pairLinks struct{ a, b, links int }

// dgx1Links is the DGX-1 (V100) hybrid cube mesh: 24 links, six per GPU.
var dgx1Links = []pairLinks{
	// The first quad, fully connected.
	{0, 1, 1}, {0, 2, 1}, {0, 3, 2}, {1, 2, 2}, {1, 3, 1}, {2, 3, 2},
	// The second quad.
	{4, 5, 1}, {4, 6, 1}, {4, 7, 2}, {5, 6, 2}, {5, 7, 1}, {6, 7, 2},
	// Between the quads.
	{0, 4, 2}, {1, 5, 2}, {2, 6, 1}, {3, 7, 1},
}

func (t Topology) String() string {
	switch t {
	case TopologyNVSwitch:
		return "TopologyNVSwitch"
	case TopologyDGX1:
		return "TopologyDGX1"
	case TopologyNVLinkPairs:
		return "TopologyNVLinkPairs"
	case TopologyPCIeOnly:
		return "TopologyPCIeOnly"
	case TopologyTwoNUMA:
		return "TopologyTwoNUMA"
	}
	return fmt.Sprintf("Topology(%d)", int(t))
}

// SetTopology replaces the whole topology (ancestors, NVLinks and NUMA
// nodes) with preset t. It panics on an unknown preset or one the machine
// cannot have.
func (m *Machine) SetTopology(t Topology) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.applyTopology(t)
}

// applyTopology is SetTopology with m.mu held (or before New returns).
func (m *Machine) applyTopology(t Topology) {
	n := len(m.devs)
	twoNodes := true
	links := make([][]NvLink, n)
	switch t {
	case TopologyNVSwitch:
		for i := range links {
			for l := range m.kind.switchLinks {
				links[i] = append(links[i], NvLink{Remote: nvml.NVLINK_DEVICE_TYPE_SWITCH, Peer: l % m.kind.switches})
			}
		}
	case TopologyDGX1:
		if n != 8 {
			panic(fmt.Sprintf("nvmltest: TopologyDGX1 needs 8 GPUs, machine has %d", n))
		}
		for _, p := range dgx1Links {
			for range p.links {
				links[p.a] = append(links[p.a], NvLink{Peer: p.b})
				links[p.b] = append(links[p.b], NvLink{Peer: p.a})
			}
		}
	case TopologyNVLinkPairs:
		twoNodes = false
		for i := 0; i+1 < n; i += 2 {
			for range 4 {
				links[i] = append(links[i], NvLink{Peer: i + 1})
				links[i+1] = append(links[i+1], NvLink{Peer: i})
			}
		}
	case TopologyPCIeOnly:
		twoNodes = false
	case TopologyTwoNUMA:
	default:
		panic(fmt.Sprintf("nvmltest: unknown topology %v", t))
	}
	for i := range links {
		if links[i] == nil {
			links[i] = []NvLink{} // set, and without NVLink
		}
		m.topo.numa[i] = 0
		if twoNodes && i >= n/2 {
			m.topo.numa[i] = 1
		}
	}
	m.topo.links = links
	clear(m.topo.ancestors)
	for i := range n {
		for j := i + 1; j < n; j++ {
			level := nvml.TOPOLOGY_SYSTEM
			switch {
			case i/2 == j/2:
				level = nvml.TOPOLOGY_SINGLE
			case m.topo.numa[i] == m.topo.numa[j]:
				level = nvml.TOPOLOGY_HOSTBRIDGE
			}
			m.topo.ancestors[pairKey(i, j)] = level
		}
	}
}
