package nvml

import (
	"context"
	"fmt"
)

// DeviceNodePrefix is the path of a GPU's device file less its minor
// number: the driver makes /dev/nvidia<minor> for each GPU.
const DeviceNodePrefix = "/dev/nvidia"

// DeviceNodes maps each GPU's UUID to its device file (/dev/nvidia<minor>,
// from NVML's minor number): the file a process opens to use that GPU, and
// what the agent covers in the sandbox of a task not given it. A GPU whose
// UUID or minor number NVML cannot say is left out, as is every GPU of a
// source without NVML (a fake set built without cgo). MIG devices have no
// file of their own here: they are reached through their GPU's.
func (s *Source) DeviceNodes(ctx context.Context) (map[string]string, error) {
	if err := s.lockOpen(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	if s.nodes == nil {
		return map[string]string{}, nil
	}
	return s.nodes()
}

// nodeName is the device file of the GPU with minor number minor.
func nodeName(minor int) string { return fmt.Sprintf("%s%d", DeviceNodePrefix, minor) }
