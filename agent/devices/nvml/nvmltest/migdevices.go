//go:build cgo && linux

package nvmltest

import (
	"reflect"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

// MIGDevice is one MIG device SetMIGDevices gives a GPU: the handle NVML's
// GetMigDeviceHandleByIndex returns, with its UUID (MIG-...), its name
// (NVML's: "<GPU name> MIG <profile>"), its memory, and the GPU and
// compute instance it is.
type MIGDevice struct {
	UUID            string
	Profile         string
	MemoryMiB       uint64
	GPUInstance     int
	ComputeInstance int
}

// SetMIGDevices puts GPU i in MIG mode with the given MIG devices, or,
// with none, out of it: GetMigMode reports the mode, and
// GetMaxMigDeviceCount and GetMigDeviceHandleByIndex hand out the devices
// (an index past them answers nvml.ERROR_NOT_FOUND, as NVML does for an
// empty slot). A MIG device's calls are about its GPU: a lost GPU or a
// failure rule on it fails them too; calls the device does not answer
// return nvml.ERROR_NOT_SUPPORTED.
func (m *Machine) SetMIGDevices(i int, devs ...MIGDevice) {
	m.checkIndex(i, false)
	name, _ := m.devs[i].GetName()
	handles := make([]nvml.Device, len(devs))
	for j, d := range devs {
		handles[j] = m.migHandle(i, name, d)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mig == nil {
		m.mig = map[int][]nvml.Device{}
	}
	if len(devs) == 0 {
		delete(m.mig, i)
		return
	}
	m.mig[i] = handles
}

// migHandle builds the handle of one MIG device of GPU i.
func (m *Machine) migHandle(i int, gpuName string, d MIGDevice) nvml.Device {
	h := &mock.Device{}
	m.fill(h, hooks{
		scope: "Device",
		answers: map[string]any{
			"GetUUID":              func() (string, nvml.Return) { return d.UUID, nvml.SUCCESS },
			"GetName":              func() (string, nvml.Return) { return gpuName + " MIG " + d.Profile, nvml.SUCCESS },
			"GetMemoryInfo":        func() (nvml.Memory, nvml.Return) { return nvml.Memory{Total: d.MemoryMiB << 20}, nvml.SUCCESS },
			"GetGpuInstanceId":     func() (int, nvml.Return) { return d.GPUInstance, nvml.SUCCESS },
			"GetComputeInstanceId": func() (int, nvml.Return) { return d.ComputeInstance, nvml.SUCCESS },
			"IsMigDeviceHandle":    func() (bool, nvml.Return) { return true, nvml.SUCCESS },
		},
		target: func(string, reflect.Type) func([]reflect.Value) int {
			return func([]reflect.Value) int { return i }
		},
	})
	return h
}

// migAnswers are GPU i's answers about MIG mode and its MIG devices.
func (m *Machine) migAnswers(i int) map[string]any {
	devices := func() ([]nvml.Device, bool) {
		m.mu.Lock()
		defer m.mu.Unlock()
		d, ok := m.mig[i]
		return d, ok
	}
	// A GPU without SetMIGDevices has the MIG devices created through
	// NVML (migmanage.go) while it is in MIG mode.
	created := func() ([]nvml.Device, bool) {
		name, _ := m.devs[i].GetName()
		return m.createdMIGDevices(i, name)
	}
	return map[string]any{
		"GetMigMode": func() (int, int, nvml.Return) {
			if _, ok := devices(); ok {
				return nvml.DEVICE_MIG_ENABLE, nvml.DEVICE_MIG_ENABLE, nvml.SUCCESS
			}
			return 0, 0, unconfigured
		},
		"GetMaxMigDeviceCount": func() (int, nvml.Return) {
			d, ok := devices()
			if !ok {
				d, ok = created()
			}
			if ok {
				return max(len(d), 7), nvml.SUCCESS
			}
			return 0, unconfigured
		},
		"GetMigDeviceHandleByIndex": func(j int) (nvml.Device, nvml.Return) {
			d, ok := devices()
			if !ok {
				d, ok = created()
			}
			switch {
			case !ok:
				return nil, unconfigured
			case j < 0 || j >= len(d):
				return nil, nvml.ERROR_NOT_FOUND
			}
			return d[j], nvml.SUCCESS
		},
	}
}
