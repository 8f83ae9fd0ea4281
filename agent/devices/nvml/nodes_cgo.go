//go:build cgo && linux

package nvml

import (
	"fmt"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
)

// nodesOf reads, through lib, each GPU's UUID and minor number.
func nodesOf(lib gonvml.Interface) func() (map[string]string, error) {
	return func() (map[string]string, error) {
		n, ret := lib.DeviceGetCount()
		if ret != gonvml.SUCCESS {
			return nil, fmt.Errorf("%w: device count: %s", ErrQuery, describe(ret))
		}
		out := make(map[string]string, n)
		for i := range n {
			h, ret := lib.DeviceGetHandleByIndex(i)
			if ret != gonvml.SUCCESS || h == nil {
				continue
			}
			uuid, ret := h.GetUUID()
			if ret != gonvml.SUCCESS || uuid == "" {
				continue
			}
			if minor, ret := h.GetMinorNumber(); ret == gonvml.SUCCESS && minor >= 0 {
				out[uuid] = nodeName(minor)
			}
		}
		return out, nil
	}
}
