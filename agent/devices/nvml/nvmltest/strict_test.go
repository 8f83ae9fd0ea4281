//go:build cgo && linux

package nvmltest

import (
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

func TestStrictPanicsNamingTheMethod(t *testing.T) {
	tests := []struct {
		call func(t *testing.T, lib nvml.Interface)
		want string // in the panic message
	}{
		{func(t *testing.T, lib nvml.Interface) { lib.DeviceGetFanSpeed(handle(t, lib, 2)) }, "Device.GetFanSpeed on GPU 2"},
		{func(t *testing.T, lib nvml.Interface) { handle(t, lib, 0).GetUtilizationRates() }, "Device.GetUtilizationRates on GPU 0"},
		{func(t *testing.T, lib nvml.Interface) { lib.SystemGetProcessName(1) }, "Interface.SystemGetProcessName:"},
		{func(t *testing.T, lib nvml.Interface) {
			set, _ := lib.EventSetCreate()
			set.Wait_v3(0)
		}, "EventSet.Wait_v3:"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			lib := New(DGXH200, Strict()).Interface()
			msg := panicMessage(func() { tt.call(t, lib) })
			if !strings.Contains(msg, tt.want) || !strings.Contains(msg, "Strict") {
				t.Errorf("panic %q, want one naming %q", msg, tt.want)
			}
		})
	}
}

func TestStrictAnswersConfiguredCalls(t *testing.T) {
	tests := []struct {
		name string
		call func(t *testing.T, m *Machine) nvml.Return
		want nvml.Return
	}{
		{"mock server", func(t *testing.T, m *Machine) nvml.Return {
			_, ret := handle(t, m.Interface(), 0).GetUUID()
			return ret
		}, nvml.SUCCESS},
		{"fixture answer set", func(t *testing.T, m *Machine) nvml.Return {
			m.SetUtilization(0, 10, 20)
			_, ret := handle(t, m.Interface(), 0).GetUtilizationRates()
			return ret
		}, nvml.SUCCESS},
		{"failure rule", func(t *testing.T, m *Machine) nvml.Return {
			m.Fail(0, "GetFanSpeed", nvml.ERROR_NO_PERMISSION, Always)
			_, ret := handle(t, m.Interface(), 0).GetFanSpeed()
			return ret
		}, nvml.ERROR_NO_PERMISSION},
		{"lost GPU", func(t *testing.T, m *Machine) nvml.Return {
			d := handle(t, m.Interface(), 0)
			m.InjectGPULost(0)
			_, ret := d.GetFanSpeed()
			return ret
		}, nvml.ERROR_GPU_IS_LOST},
		{"events", func(t *testing.T, m *Machine) nvml.Return {
			set := registeredSet(t, m.Interface(), nvml.EventTypeXidCriticalError)
			_, ret := set.Wait(0)
			return ret
		}, nvml.ERROR_TIMEOUT},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(DGXH200, Strict())
			var got nvml.Return
			if msg := panicMessage(func() { got = tt.call(t, m) }); msg != "" {
				t.Fatalf("panicked: %s", msg)
			}
			if got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
