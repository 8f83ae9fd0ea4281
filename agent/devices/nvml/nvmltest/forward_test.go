//go:build cgo && linux

package nvmltest

import (
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

func TestInterfaceForwardsToObjects(t *testing.T) {
	tests := []struct {
		name string
		call func(t *testing.T, m *Machine) (any, nvml.Return)
		want any
		ret  nvml.Return
	}{
		{"device method", func(t *testing.T, m *Machine) (any, nvml.Return) {
			return m.Interface().DeviceGetUUID(handle(t, m.Interface(), 4))
		}, StableUUID(4), nvml.SUCCESS},
		{"device answer", func(t *testing.T, m *Machine) (any, nvml.Return) {
			m.SetTemperature(4, 61)
			return m.Interface().DeviceGetTemperature(handle(t, m.Interface(), 4), nvml.TEMPERATURE_GPU)
		}, uint32(61), nvml.SUCCESS},
		{"device failure rule", func(t *testing.T, m *Machine) (any, nvml.Return) {
			m.Fail(4, "GetUUID", nvml.ERROR_UNKNOWN, Once)
			return m.Interface().DeviceGetUUID(handle(t, m.Interface(), 4))
		}, "", nvml.ERROR_UNKNOWN},
		{"nil device", func(t *testing.T, m *Machine) (any, nvml.Return) {
			return m.Interface().DeviceGetUUID(nil)
		}, "", nvml.ERROR_INVALID_ARGUMENT},
		{"event set method", func(t *testing.T, m *Machine) (any, nvml.Return) {
			set := registeredSet(t, m.Interface(), nvml.EventTypeXidCriticalError)
			m.InjectXid(4, 45)
			ev, ret := m.Interface().EventSetWait(set, 0)
			return ev.EventData, ret
		}, uint64(45), nvml.SUCCESS},
		{"GPU instance method", func(t *testing.T, m *Machine) (any, nvml.Return) {
			gi, _ := migInstances(t, m.Interface())
			info, ret := m.Interface().GpuInstanceGetInfo(gi)
			return info.Device == handle(t, m.Interface(), 0), ret
		}, true, nvml.SUCCESS},
		{"GPU instance of a lost GPU", func(t *testing.T, m *Machine) (any, nvml.Return) {
			gi, _ := migInstances(t, m.Interface())
			m.InjectGPULost(0)
			info, ret := gi.GetInfo()
			return info.Device, ret
		}, nvml.Device(nil), nvml.ERROR_GPU_IS_LOST},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ret := tt.call(t, New(DGXH200, StableUUIDs()))
			if ret != tt.ret || got != tt.want {
				t.Errorf("got %v %v, want %v %v", got, ret, tt.want, tt.ret)
			}
		})
	}
}
