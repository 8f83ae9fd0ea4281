//go:build cgo && linux

package nvmltest

import "github.com/NVIDIA/go-nvml/pkg/nvml"

// XidFallenOffBus is the Xid the driver reports when a GPU has fallen off
// the bus; InjectGPULost delivers it.
const XidFallenOffBus uint64 = 79

// InjectGPULost makes device i (or, with All, every device) fall off the
// bus, as the real driver reports it: an Xid 79 event (see InjectXid) is
// delivered, and from then on every call about the device returns
// nvml.ERROR_GPU_IS_LOST, including DeviceGetHandleByIndex(i) and
// RegisterEvents. A lost device is never found again.
func (m *Machine) InjectGPULost(i int) {
	for _, j := range m.indices(i) {
		m.mu.Lock()
		m.failures.lost[j] = true
		m.deliver(j, xidEvent(m.devs[j], XidFallenOffBus))
		m.mu.Unlock()
	}
}

// Lost reports whether device i has been lost.
func (m *Machine) Lost(i int) bool {
	m.checkIndex(i, false)
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.failures.lost[i]
}

// xidEvent is the event of Xid xid on device d.
func xidEvent(d nvml.Device, xid uint64) nvml.EventData {
	return nvml.EventData{
		Device:            d,
		EventType:         nvml.EventTypeXidCriticalError,
		EventData:         xid,
		GpuInstanceId:     NoInstance,
		ComputeInstanceId: NoInstance,
	}
}
