package agent

import (
	"slices"
	"strconv"

	"github.com/gpulayer/gpulayer/agent/fabric"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// discoverFabric reads the host's RDMA adapters once, at New: an agent
// whose capabilities take anything (or name some) also advertises the
// fabrics it found up (fabric.Capabilities), so a job may ask for
// `infiniband` or `roce`; an agent configured to take nothing ([]) stays
// so. A listing that fails is logged and read as no adapters.
func (a *Agent) discoverFabric() {
	adapters, err := fabric.Discover(a.cfg.FabricSysfs)
	if err != nil {
		a.log.Warn("reading the host's RDMA adapters failed; advertising none", "error", err)
		return
	}
	a.adapters = adapters
	if len(adapters) > 0 {
		a.log.Info("RDMA adapters", "adapters", describeAdapters(adapters), "nccl_hints", a.cfg.NCCLHints.Enabled)
	}
	if len(a.cfg.Capabilities) == 0 {
		return
	}
	for _, c := range fabric.Capabilities(adapters) {
		if !slices.Contains(a.cfg.Capabilities, c) {
			a.cfg.Capabilities = append(a.cfg.Capabilities, c)
		}
	}
}

// describeAdapters names each adapter with its NUMA node and the ports up.
func describeAdapters(adapters []fabric.Adapter) []string {
	out := make([]string, 0, len(adapters))
	for _, ad := range adapters {
		out = append(out, ad.Name+" numa="+strconv.Itoa(ad.NUMANode)+" up="+strconv.Itoa(len(ad.ActivePorts())))
	}
	return out
}

// ncclHints is the runner's Hints: the NCCL variables for a task that
// holds GPUs, with the adapters nearest the NUMA nodes its GPUs (or its
// MIG devices' parents) hang off listed first.
func (a *Agent) ncclHints(as api.Assignment) map[string]string {
	if !a.cfg.NCCLHints.Enabled || len(as.Devices) == 0 {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	byUUID := make(map[string]api.Device, len(a.devices))
	for _, d := range a.devices {
		byUUID[d.UUID] = d
	}
	numa := make([]int, 0, len(as.Devices))
	for _, u := range as.Devices {
		d, ok := byUUID[u]
		if p, isMIG := byUUID[d.Parent]; ok && d.Parent != "" && isMIG {
			d = p
		}
		if ok && d.NUMANode != nil {
			numa = append(numa, *d.NUMANode)
		} else {
			numa = append(numa, -1)
		}
	}
	return a.cfg.NCCLHints.Env(a.adapters, numa)
}
