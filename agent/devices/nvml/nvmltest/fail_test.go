//go:build cgo && linux

package nvmltest

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

func TestFailModes(t *testing.T) {
	const F, S = nvml.ERROR_UNKNOWN, nvml.SUCCESS
	tests := []struct {
		name string
		mode Mode
		want []nvml.Return // of five calls in a row
	}{
		{"always", Always, []nvml.Return{F, F, F, F, F}},
		{"once", Once, []nvml.Return{F, S, S, S, S}},
		{"after 2", After(2), []nvml.Return{S, S, F, F, F}},
		{"after 0", After(0), []nvml.Return{F, F, F, F, F}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(DGXA100)
			lib := m.Interface()
			d := handle(t, lib, 1)
			m.Fail(1, "GetUUID", nvml.ERROR_UNKNOWN, tt.mode)
			var got []nvml.Return
			for range tt.want {
				uuid, ret := lib.DeviceGetUUID(d)
				if (ret == nvml.SUCCESS) != (uuid != "") {
					t.Errorf("uuid %q with %v", uuid, ret)
				}
				got = append(got, ret)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestFailTargets(t *testing.T) {
	tests := []struct {
		name   string
		dev    int
		method string
		// call makes the call under test on device i (for Interface
		// and EventSet calls, i is ignored or names the handle).
		call func(t *testing.T, lib nvml.Interface, i int) nvml.Return
		// want lists the devices on which the call fails.
		want []int
	}{
		{"one device", 1, "GetUUID", callGetUUID, []int{1}},
		{"all devices", All, "GetUUID", callGetUUID, []int{0, 1, 2, 3, 4, 5, 6, 7}},
		{"qualified name", 2, "Device.GetUUID", callGetUUID, []int{2}},
		{"interface name", 3, "DeviceGetUUID", func(t *testing.T, lib nvml.Interface, i int) nvml.Return {
			_, ret := lib.DeviceGetUUID(handle(t, lib, i))
			return ret
		}, []int{3}},
		{"handle by index", 4, "DeviceGetHandleByIndex", func(t *testing.T, lib nvml.Interface, i int) nvml.Return {
			_, ret := lib.DeviceGetHandleByIndex(i)
			return ret
		}, []int{4}},
		{"handle by UUID", 5, "DeviceGetHandleByUUID", func(t *testing.T, lib nvml.Interface, i int) nvml.Return {
			uuid, _ := handle(t, lib, i).GetUUID()
			_, ret := lib.DeviceGetHandleByUUID(uuid)
			return ret
		}, []int{5}},
		{"interface call about no device", All, "SystemGetDriverVersion", func(t *testing.T, lib nvml.Interface, i int) nvml.Return {
			_, ret := lib.SystemGetDriverVersion()
			return ret
		}, []int{0, 1, 2, 3, 4, 5, 6, 7}},
		{"interface call about no device, rule for one", 0, "DeviceGetCount", func(t *testing.T, lib nvml.Interface, i int) nvml.Return {
			_, ret := lib.DeviceGetCount()
			return ret
		}, nil},
		{"event set", All, "Wait", func(t *testing.T, lib nvml.Interface, i int) nvml.Return {
			set, _ := lib.EventSetCreate()
			_, ret := set.Wait(0)
			if ret == nvml.ERROR_TIMEOUT {
				return nvml.SUCCESS
			}
			return ret
		}, []int{0, 1, 2, 3, 4, 5, 6, 7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(DGXH100)
			lib := m.Interface()
			m.Fail(tt.dev, tt.method, nvml.ERROR_NO_PERMISSION, Always)
			var failed []int
			for i := range m.Count() {
				switch ret := tt.call(t, lib, i); ret {
				case nvml.ERROR_NO_PERMISSION:
					failed = append(failed, i)
				case nvml.SUCCESS:
				default:
					t.Errorf("device %d: %v", i, ret)
				}
			}
			if !slices.Equal(failed, tt.want) {
				t.Errorf("failed on %v, want %v", failed, tt.want)
			}
		})
	}
}

func callGetUUID(t *testing.T, lib nvml.Interface, i int) nvml.Return {
	_, ret := handle(t, lib, i).GetUUID()
	return ret
}

func TestFailRulesInOrder(t *testing.T) {
	m := New(DGXB200)
	d := handle(t, m.Interface(), 0)
	m.Fail(0, "GetName", nvml.ERROR_TIMEOUT, Once)
	m.Fail(All, "GetName", nvml.ERROR_UNKNOWN, After(1))
	// The first call fails by the first rule, and so does not count as
	// let through by the second; the second call is let through by it.
	want := []nvml.Return{nvml.ERROR_TIMEOUT, nvml.SUCCESS, nvml.ERROR_UNKNOWN, nvml.ERROR_UNKNOWN}
	var got []nvml.Return
	for range want {
		_, ret := d.GetName()
		got = append(got, ret)
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	m.ClearFailures()
	if _, ret := d.GetName(); ret != nvml.SUCCESS {
		t.Errorf("after ClearFailures: %v", ret)
	}
}

func TestFailRejectsMistakes(t *testing.T) {
	m := New(DGXA100)
	tests := []struct {
		name string
		call func()
		want string
	}{
		{"unknown method", func() { m.Fail(0, "GetUUIDs", nvml.ERROR_UNKNOWN, Once) }, `no NVML method "GetUUIDs"`},
		{"method of another type", func() { m.Fail(0, "EventSet.GetUUID", nvml.ERROR_UNKNOWN, Once) }, "no NVML method"},
		{"no Return", func() { m.FailCall("GetTemperatureV", nvml.ERROR_UNKNOWN) }, "returns no nvml.Return"},
		{"no device", func() { m.Fail(8, "GetUUID", nvml.ERROR_UNKNOWN, Once) }, "no device 8"},
		{"negative After", func() { After(-1) }, "must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if msg := panicMessage(tt.call); !strings.Contains(msg, tt.want) {
				t.Errorf("panic %q, want %q", msg, tt.want)
			}
		})
	}
}

// TestGPULostFailsEveryCall calls every method of nvml.Device that returns
// an nvml.Return on a lost device, with zero arguments.
func TestGPULostFailsEveryCall(t *testing.T) {
	m := New(DGXH200)
	lib := m.Interface()
	lost := handle(t, lib, 3)
	uuid, _ := lost.GetUUID()
	m.InjectGPULost(3)
	if !m.Lost(3) || m.Lost(2) {
		t.Fatalf("Lost(3) = %v, Lost(2) = %v", m.Lost(3), m.Lost(2))
	}

	v := reflect.ValueOf(lost)
	calls := 0
	for i := range deviceType.NumMethod() {
		mt := deviceType.Method(i)
		if mt.Type.NumOut() == 0 || mt.Type.Out(mt.Type.NumOut()-1) != returnType {
			continue
		}
		args := make([]reflect.Value, mt.Type.NumIn())
		for j := range args {
			args[j] = reflect.Zero(mt.Type.In(j))
		}
		out := v.MethodByName(mt.Name).Call(args)
		if ret := out[len(out)-1].Interface(); ret != nvml.ERROR_GPU_IS_LOST {
			t.Errorf("%s on a lost GPU = %v", mt.Name, ret)
		}
		calls++
	}
	if calls < 250 {
		t.Errorf("only %d device methods called", calls)
	}

	lookups := []struct {
		name string
		ret  func() nvml.Return
	}{
		{"DeviceGetHandleByIndex", func() nvml.Return { _, r := lib.DeviceGetHandleByIndex(3); return r }},
		{"DeviceGetHandleByUUID", func() nvml.Return { _, r := lib.DeviceGetHandleByUUID(uuid); return r }},
		{"DeviceGetMemoryInfo", func() nvml.Return { _, r := lib.DeviceGetMemoryInfo(lost); return r }},
	}
	for _, l := range lookups {
		if got := l.ret(); got != nvml.ERROR_GPU_IS_LOST {
			t.Errorf("%s = %v", l.name, got)
		}
	}
	if _, ret := handle(t, lib, 2).GetUUID(); ret != nvml.SUCCESS {
		t.Errorf("device 2 is affected: %v", ret)
	}
	if n, ret := lib.DeviceGetCount(); ret != nvml.SUCCESS || n != 8 {
		t.Errorf("DeviceGetCount = %d %v", n, ret)
	}
}
