//go:build cgo && linux

package nvml

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// Topology: how each GPU reaches each other one (NVLink, an NVSwitch
// fabric, or the PCIe tree) and its NUMA node. It is read once per set
// of devices, not at every inventory: it changes only with the hardware,
// and reading it costs a few hundred NVML calls on an eight-GPU node.
// Topology is an aid to placement, not a safety property: a query that
// fails leaves the pair's path unknown (absent), never the GPU unusable.

// withTopology adds each device's links and NUMA node to read's
// inventory.
func withTopology(read readFunc, lib gonvml.Interface, logger *slog.Logger) readFunc {
	var mu sync.Mutex
	var key string
	var known map[string]deviceTopology
	return func(ctx context.Context) ([]api.Device, []error, error) {
		devs, problems, err := read(ctx)
		if err != nil {
			return devs, problems, err
		}
		mu.Lock()
		defer mu.Unlock()
		if k := uuidKey(devs); k != key {
			known, key = discoverTopology(lib, wholeGPUs(devs)), k
			if logger != nil {
				logger.Info("GPU topology read", "gpus", len(known), "summary", summarize(known))
			}
		}
		for i := range devs {
			if t, ok := known[devs[i].UUID]; ok {
				devs[i].NUMANode, devs[i].Links = t.numa, t.links
			}
		}
		return devs, problems, nil
	}
}

// wholeGPUs is devs less the MIG devices: topology is the GPUs' (a MIG
// device reaches others through its GPU).
func wholeGPUs(devs []api.Device) []api.Device {
	out := make([]api.Device, 0, len(devs))
	for _, d := range devs {
		if d.Parent == "" {
			out = append(out, d)
		}
	}
	return out
}

// deviceTopology is one GPU's place in the topology.
type deviceTopology struct {
	numa  *int
	links []api.DeviceLink
}

// uuidKey names a set of devices, in index order.
func uuidKey(devs []api.Device) string {
	ids := make([]string, len(devs))
	for i, d := range devs {
		ids[i] = d.UUID
	}
	return strings.Join(ids, ",")
}

// discoverTopology reads the topology of the healthy devices with a UUID.
func discoverTopology(lib gonvml.Interface, devs []api.Device) map[string]deviceTopology {
	type gpu struct {
		uuid   string
		handle gonvml.Device
	}
	var gpus []gpu
	byBus := map[string]int{} // PCI bus id → position in gpus
	for _, d := range devs {
		if !d.Healthy || d.UUID == "" {
			continue
		}
		h, ret := lib.DeviceGetHandleByIndex(d.Index)
		if ret != gonvml.SUCCESS || h == nil {
			continue
		}
		if pci, ret := h.GetPciInfo(); ret == gonvml.SUCCESS {
			byBus[normalBusID(busID(pci))] = len(gpus)
		}
		gpus = append(gpus, gpu{uuid: d.UUID, handle: h})
	}
	// NVLinks: to each peer GPU, and into a switch fabric.
	direct := make([]map[int]int, len(gpus))
	fabric := make([]int, len(gpus))
	for i, g := range gpus {
		direct[i] = map[int]int{}
		for l := range gonvml.NVLINK_MAX_LINKS {
			state, ret := g.handle.GetNvLinkState(l)
			if ret != gonvml.SUCCESS {
				break // no NVLink (NOT_SUPPORTED), or past the device's last link
			}
			if state != gonvml.FEATURE_ENABLED {
				continue
			}
			kind, ret := g.handle.GetNvLinkRemoteDeviceType(l)
			if ret != gonvml.SUCCESS {
				continue
			}
			switch kind {
			case gonvml.NVLINK_DEVICE_TYPE_SWITCH:
				fabric[i]++
			case gonvml.NVLINK_DEVICE_TYPE_GPU:
				if pci, ret := g.handle.GetNvLinkRemotePciInfo(l); ret == gonvml.SUCCESS {
					if j, ok := byBus[normalBusID(busID(pci))]; ok && j != i {
						direct[i][j]++
					}
				}
			}
		}
	}
	out := make(map[string]deviceTopology, len(gpus))
	for i, g := range gpus {
		var t deviceTopology
		if n, ret := g.handle.GetNumaNodeId(); ret == gonvml.SUCCESS && n >= 0 {
			t.numa = &n
		}
		for j, peer := range gpus {
			if j == i {
				continue
			}
			link := api.DeviceLink{Peer: peer.uuid}
			switch {
			case direct[i][j] > 0 || direct[j][i] > 0:
				link.Path, link.NvLinks = api.PathNvLink, max(direct[i][j], direct[j][i])
			case fabric[i] > 0 && fabric[j] > 0:
				link.Path, link.NvLinks = api.PathNVSwitch, min(fabric[i], fabric[j])
			default:
				level, ret := g.handle.GetTopologyCommonAncestor(peer.handle)
				if ret != gonvml.SUCCESS {
					continue // unknown: absent
				}
				link.Path = pciePath(level)
			}
			t.links = append(t.links, link)
		}
		out[g.uuid] = t
	}
	return out
}

// pciePath names a common PCIe ancestor in nvidia-smi topo's words.
func pciePath(level gonvml.GpuTopologyLevel) string {
	switch level {
	case gonvml.TOPOLOGY_INTERNAL:
		return api.PathBoard
	case gonvml.TOPOLOGY_SINGLE:
		return api.PathPIX
	case gonvml.TOPOLOGY_MULTIPLE:
		return api.PathPXB
	case gonvml.TOPOLOGY_HOSTBRIDGE:
		return api.PathPHB
	case gonvml.TOPOLOGY_NODE:
		return api.PathNode
	default:
		return api.PathSys
	}
}

// busID reads a PciInfo's bus id (a NUL-terminated C string).
func busID(p gonvml.PciInfo) string {
	var b strings.Builder
	for _, c := range p.BusId {
		if c == 0 {
			break
		}
		b.WriteByte(byte(c))
	}
	return b.String()
}

// normalBusID makes bus ids comparable: NVML gives "00000000:1B:00.0"
// for some calls and "0000:1b:00.0" for others.
func normalBusID(id string) string {
	id = strings.ToLower(id)
	if domain, rest, ok := strings.Cut(id, ":"); ok && len(domain) > 4 {
		id = domain[len(domain)-4:] + ":" + rest
	}
	return id
}

// summarize counts a topology's paths, for the log: "nvswitch=56".
func summarize(known map[string]deviceTopology) string {
	count := map[string]int{}
	for _, t := range known {
		for _, l := range t.links {
			count[l.Path]++
		}
	}
	var parts []string
	for _, p := range api.LinkPaths {
		if count[p] > 0 {
			parts = append(parts, p+"="+strconv.Itoa(count[p]))
		}
	}
	return strings.Join(parts, " ")
}
