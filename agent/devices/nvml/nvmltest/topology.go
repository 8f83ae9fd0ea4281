//go:build cgo && linux

package nvmltest

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// NvLink is one NVLink of a device.
type NvLink struct {
	// Remote is what the link leads to, as GetNvLinkRemoteDeviceType
	// reports it: nvml.NVLINK_DEVICE_TYPE_GPU (the zero value),
	// NVLINK_DEVICE_TYPE_SWITCH, or another type.
	Remote nvml.IntNvLinkDeviceType
	// Peer is the index of the GPU at the far end when Remote is
	// NVLINK_DEVICE_TYPE_GPU, and otherwise a number for the remote
	// device (the NVSwitch chip), which chooses its PCI bus ID.
	Peer int
	// Down makes GetNvLinkState report the link nvml.FEATURE_DISABLED.
	Down bool
}

// topology is what the topology queries answer. Guarded by Machine.mu.
type topology struct {
	// ancestors holds the common PCIe ancestor of each pair set, keyed
	// with the lower index first.
	ancestors map[[2]int]nvml.GpuTopologyLevel
	links     [][]NvLink // by device; nil when not set
	numa      []int      // by device; -1 when not set
}

func (t *topology) init(n int) {
	t.ancestors = map[[2]int]nvml.GpuTopologyLevel{}
	t.links = make([][]NvLink, n)
	t.numa = make([]int, n)
	for i := range t.numa {
		t.numa[i] = -1
	}
}

// SetCommonAncestor sets the closest common PCIe ancestor of devices i and
// j (both ways), as GetTopologyCommonAncestor and GetTopologyNearestGpus
// report it. A device's ancestor with itself is always
// nvml.TOPOLOGY_INTERNAL.
func (m *Machine) SetCommonAncestor(i, j int, level nvml.GpuTopologyLevel) {
	m.checkIndex(i, false)
	m.checkIndex(j, false)
	if i == j {
		panic(fmt.Sprintf("nvmltest: SetCommonAncestor(%d, %d): a device's ancestor with itself is fixed", i, j))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.topo.ancestors[pairKey(i, j)] = level
}

// SetNvLinks sets the NVLinks of device i, numbered from 0 in the order
// given. Calling it with no links says the device has no NVLink, as on a
// PCIe-only GPU. Links to GPU peers are not mirrored on the peer.
func (m *Machine) SetNvLinks(i int, links ...NvLink) {
	m.checkIndex(i, false)
	for _, l := range links {
		if l.Remote == nvml.NVLINK_DEVICE_TYPE_GPU {
			m.checkIndex(l.Peer, false)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.topo.links[i] = append([]NvLink{}, links...)
}

// SetNvLinkState brings NVLink link of device i up or down.
func (m *Machine) SetNvLinkState(i, link int, up bool) {
	m.checkIndex(i, false)
	m.mu.Lock()
	defer m.mu.Unlock()
	if link < 0 || link >= len(m.topo.links[i]) {
		panic(fmt.Sprintf("nvmltest: device %d has no NVLink %d (it has %d)", i, link, len(m.topo.links[i])))
	}
	m.topo.links[i][link].Down = !up
}

// SetNumaNode sets the NUMA node GetNumaNodeId reports for device i (or,
// with All, every device).
func (m *Machine) SetNumaNode(i, node int) {
	for _, j := range m.indices(i) {
		m.mu.Lock()
		m.topo.numa[j] = node
		m.mu.Unlock()
	}
}

// topologyAnswers are device i's answers about topology.
func (m *Machine) topologyAnswers(i int) map[string]any {
	return map[string]any{
		"GetTopologyCommonAncestor": func(other nvml.Device) (nvml.GpuTopologyLevel, nvml.Return) {
			j := m.indexOf(other)
			if j == noDevice {
				return 0, nvml.ERROR_INVALID_ARGUMENT
			}
			if j == i {
				return nvml.TOPOLOGY_INTERNAL, nvml.SUCCESS
			}
			m.mu.Lock()
			defer m.mu.Unlock()
			level, ok := m.topo.ancestors[pairKey(i, j)]
			if !ok {
				return 0, unconfigured
			}
			return level, nvml.SUCCESS
		},
		"GetTopologyNearestGpus": func(level nvml.GpuTopologyLevel) ([]nvml.Device, nvml.Return) {
			m.mu.Lock()
			defer m.mu.Unlock()
			var near []nvml.Device
			set := false
			for j, d := range m.devs {
				l, ok := m.topo.ancestors[pairKey(i, j)]
				set = set || ok
				if ok && l <= level {
					near = append(near, d)
				}
			}
			if !set {
				return nil, unconfigured
			}
			return near, nvml.SUCCESS
		},
		"GetNvLinkState": func(link int) (nvml.EnableState, nvml.Return) {
			l, ret := m.nvLink(i, link)
			if ret != nvml.SUCCESS {
				return 0, ret
			}
			if l.Down {
				return nvml.FEATURE_DISABLED, nvml.SUCCESS
			}
			return nvml.FEATURE_ENABLED, nvml.SUCCESS
		},
		"GetNvLinkRemoteDeviceType": func(link int) (nvml.IntNvLinkDeviceType, nvml.Return) {
			l, ret := m.nvLink(i, link)
			if ret != nvml.SUCCESS {
				return 0, ret
			}
			return l.Remote, nvml.SUCCESS
		},
		"GetNvLinkRemotePciInfo": func(link int) (nvml.PciInfo, nvml.Return) {
			l, ret := m.nvLink(i, link)
			if ret != nvml.SUCCESS {
				return nvml.PciInfo{}, ret
			}
			if l.Remote == nvml.NVLINK_DEVICE_TYPE_GPU {
				return pciInfo(m.devs[l.Peer].PciBusID, m.devs[l.Peer].Config.PciDeviceId), nvml.SUCCESS
			}
			return pciInfo(switchBusID(l.Peer), 0), nvml.SUCCESS
		},
		"GetNumaNodeId": func() (int, nvml.Return) {
			m.mu.Lock()
			defer m.mu.Unlock()
			if m.topo.numa[i] < 0 {
				return 0, unconfigured
			}
			return m.topo.numa[i], nvml.SUCCESS
		},
		"GetPciInfo": func() (nvml.PciInfo, nvml.Return) {
			return pciInfo(m.devs[i].PciBusID, m.devs[i].Config.PciDeviceId), nvml.SUCCESS
		},
	}
}

// nvLink is NVLink link of device i. A device whose links are not set is
// unconfigured; one without links answers nvml.ERROR_NOT_SUPPORTED, as a
// GPU without NVLink does; a link the device does not have gives
// nvml.ERROR_INVALID_ARGUMENT.
func (m *Machine) nvLink(i, link int) (NvLink, nvml.Return) {
	m.mu.Lock()
	defer m.mu.Unlock()
	links := m.topo.links[i]
	switch {
	case links == nil:
		return NvLink{}, unconfigured
	case len(links) == 0:
		return NvLink{}, nvml.ERROR_NOT_SUPPORTED
	case link < 0 || link >= len(links):
		return NvLink{}, nvml.ERROR_INVALID_ARGUMENT
	}
	return links[link], nvml.SUCCESS
}

// pairKey is the key of the unordered pair i, j.
func pairKey(i, j int) [2]int {
	return [2]int{min(i, j), max(i, j)}
}

// switchBusID is the PCI bus ID given to NVSwitch chip sw.
func switchBusID(sw int) string {
	return fmt.Sprintf("0000:%02x:00.0", 0xc0+sw)
}

// pciInfo is the nvml.PciInfo of the device at bus ID busID
// ("0000:01:00.0"): the mock server reports only the PCI device ID, and
// this adds the bus ID so that GetNvLinkRemotePciInfo can be matched
// against GetPciInfo.
func pciInfo(busID string, pciDeviceID uint32) nvml.PciInfo {
	p := nvml.PciInfo{PciDeviceId: pciDeviceID}
	var dev, fn uint32
	_, _ = fmt.Sscanf(busID, "%x:%x:%x.%x", &p.Domain, &p.Bus, &dev, &fn)
	p.Device = dev
	for k := 0; k < len(busID) && k < len(p.BusId)-1; k++ {
		p.BusId[k] = int8(busID[k])
	}
	legacy := fmt.Sprintf("%04x:%02x:%02x.%x", p.Domain&0xffff, p.Bus, dev, fn)
	for k := 0; k < len(legacy) && k < len(p.BusIdLegacy)-1; k++ {
		p.BusIdLegacy[k] = int8(legacy[k])
	}
	return p
}
