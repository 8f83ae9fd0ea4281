package agent

import (
	"context"
	"slices"
)

// deviceNodeSource is a device source that knows each GPU's device file
// (nvml.Source): the agent covers, in each task's sandbox, the files of
// the GPUs the task was not given, so that a task opens only its own
// whatever CUDA_VISIBLE_DEVICES says. A source without it fences nothing.
type deviceNodeSource interface {
	DeviceNodes(ctx context.Context) (map[string]string, error)
}

// readDeviceNodes reads the GPUs' device files from the source, where it
// knows them, and keeps them for fencedDevices. A failed read keeps the
// files known before and says so: a GPU whose file is not known is not
// fenced.
func (a *Agent) readDeviceNodes(ctx context.Context) {
	src, ok := a.cfg.Devices.(deviceNodeSource)
	if !ok {
		return
	}
	nodes, err := src.DeviceNodes(ctx)
	if err != nil {
		a.log.Warn("reading the GPUs' device files failed; tasks are not fenced off the GPUs they were not given", "error", err)
		return
	}
	a.mu.Lock()
	a.gpuNodes = nodes
	a.mu.Unlock()
}

// fencedDevices returns the device files a task given the devices given
// (GPU or MIG UUIDs) must not open: those of every GPU of this host that
// is neither given nor the GPU of a given MIG device. A task given no
// device is fenced off every GPU.
func (a *Agent) fencedDevices(given []string) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.gpuNodes) == 0 {
		return nil
	}
	mine := make(map[string]bool, len(given))
	for _, u := range given {
		mine[u] = true
		for _, d := range a.devices {
			if d.UUID == u && d.Parent != "" {
				mine[d.Parent] = true
			}
		}
	}
	var out []string
	for uuid, node := range a.gpuNodes {
		if !mine[uuid] {
			out = append(out, node)
		}
	}
	slices.Sort(out)
	return out
}
