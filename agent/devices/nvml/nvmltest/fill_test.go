//go:build cgo && linux

package nvmltest

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// TestEveryFuncIsFilled checks that no func field of any mock the fixture
// hands out is left nil, on every machine.
func TestEveryFuncIsFilled(t *testing.T) {
	for _, name := range Machines() {
		t.Run(name, func(t *testing.T) {
			m := New(name)
			lib := m.Interface()
			set, _ := lib.EventSetCreate()
			gi, ci := migInstances(t, lib)
			mocks := map[string]any{
				"Interface":       &m.srv.Interface,
				"EventSet":        &set.(*eventSet).EventSet,
				"GpuInstance":     &gi.(*server.GpuInstance).GpuInstance,
				"ComputeInstance": &ci.(*server.ComputeInstance).ComputeInstance,
			}
			for i, d := range m.devs {
				mocks["Device"+strconv.Itoa(i)] = &d.Device
			}
			for what, p := range mocks {
				v := reflect.ValueOf(p).Elem()
				funcs := 0
				for i := range v.NumField() {
					f := v.Type().Field(i)
					if f.Type.Kind() != reflect.Func || !strings.HasSuffix(f.Name, "Func") {
						continue
					}
					funcs++
					if v.Field(i).IsNil() {
						t.Errorf("%s.%s is nil", what, f.Name)
					}
				}
				if funcs == 0 {
					t.Errorf("%s has no func fields", what)
				}
			}
		})
	}
}

// TestEveryUnansweredCallReturnsNotSupported calls, through the plain
// nvml.Interface and nvml.Device, every method that neither the fixture nor
// the mock server answers, with zero arguments, and every Interface method
// that forwards to such a Device method, with device 0.
func TestEveryUnansweredCallReturnsNotSupported(t *testing.T) {
	m := New(DGXH100)
	lib := m.Interface()
	dev := handle(t, lib, 0)
	unanswered := func(s *site) bool { return s != nil && !s.answer.IsValid() && !s.base.IsValid() && s.returns }
	called := map[string]int{}
	check := func(key string, method reflect.Value, first ...reflect.Value) {
		args := first
		for i := len(first); i < method.Type().NumIn(); i++ {
			args = append(args, reflect.Zero(method.Type().In(i)))
		}
		out := method.Call(args)
		if ret := out[len(out)-1].Interface(); ret != nvml.ERROR_NOT_SUPPORTED {
			t.Errorf("%s returned %v, want ERROR_NOT_SUPPORTED", key, ret)
		}
	}
	for key, s := range m.sites {
		switch {
		case strings.HasPrefix(key, "Device0.") && unanswered(s):
			check(key, reflect.ValueOf(dev).MethodByName(s.name))
			called["Device"]++
		case strings.HasPrefix(key, "Interface.") && unanswered(s):
			check(key, reflect.ValueOf(lib).MethodByName(s.name))
			called["Interface"]++
		case strings.HasPrefix(key, "Interface.") && s.typ.NumIn() > 0 && s.typ.In(0) == deviceType &&
			unanswered(m.sites["Device0."+strings.TrimPrefix(s.name, "Device")]):
			check(key, reflect.ValueOf(lib).MethodByName(s.name), reflect.ValueOf(dev))
			called["forwarded"]++
		}
	}
	// go-nvml v0.13.4-1 has 407 Interface and 280 Device methods; the
	// counts here are what the mock server and fixture leave unanswered.
	for what, least := range map[string]int{"Device": 200, "Interface": 40, "forwarded": 200} {
		if called[what] < least {
			t.Errorf("called only %d unanswered %s methods", called[what], what)
		}
	}
}

func TestUnconfiguredCalls(t *testing.T) {
	tests := []struct {
		name string
		call func(t *testing.T, m *Machine) nvml.Return
		want nvml.Return
	}{
		{"Interface.SystemGetProcessName", func(t *testing.T, m *Machine) nvml.Return {
			_, ret := m.Interface().SystemGetProcessName(1)
			return ret
		}, nvml.ERROR_NOT_SUPPORTED},
		{"DeviceGetFanSpeed forwarded", func(t *testing.T, m *Machine) nvml.Return {
			_, ret := m.Interface().DeviceGetFanSpeed(handle(t, m.Interface(), 3))
			return ret
		}, nvml.ERROR_NOT_SUPPORTED},
		{"Device.GetClockInfo", func(t *testing.T, m *Machine) nvml.Return {
			_, ret := handle(t, m.Interface(), 1).GetClockInfo(nvml.CLOCK_SM)
			return ret
		}, nvml.ERROR_NOT_SUPPORTED},
		{"fixture answer not set", func(t *testing.T, m *Machine) nvml.Return {
			_, ret := handle(t, m.Interface(), 1).GetUtilizationRates()
			return ret
		}, nvml.ERROR_NOT_SUPPORTED},
		{"EventSet.Wait_v3", func(t *testing.T, m *Machine) nvml.Return {
			set, _ := m.Interface().EventSetCreate()
			_, ret := set.Wait_v3(0)
			return ret
		}, nvml.ERROR_NOT_SUPPORTED},
		{"GpuInstance.GetComputeInstanceRemainingCapacity", func(t *testing.T, m *Machine) nvml.Return {
			gi, _ := migInstances(t, m.Interface())
			_, ret := gi.GetComputeInstanceRemainingCapacity(&nvml.ComputeInstanceProfileInfo{})
			return ret
		}, nvml.ERROR_NOT_SUPPORTED},
		{"mock server answer kept", func(t *testing.T, m *Machine) nvml.Return {
			_, ret := handle(t, m.Interface(), 1).GetName()
			return ret
		}, nvml.SUCCESS},
		{"MIG instance answer kept", func(t *testing.T, m *Machine) nvml.Return {
			_, ci := migInstances(t, m.Interface())
			_, ret := ci.GetInfo()
			return ret
		}, nvml.SUCCESS},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.call(t, New(DGXA100)); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestResultsWithoutReturn(t *testing.T) {
	m := New(DGXB200)
	lib := m.Interface()
	if got := lib.ErrorString(nvml.ERROR_GPU_IS_LOST); got != "ERROR_GPU_IS_LOST" {
		t.Errorf("ErrorString = %q", got)
	}
	// A go-nvml handler cannot be faked; calling one would reach the C
	// library, so the fixture panics and says why.
	msg := panicMessage(func() { handle(t, lib, 2).GetTemperatureV() })
	if !strings.Contains(msg, "Device.GetTemperatureV on GPU 2") || !strings.Contains(msg, "handler") {
		t.Errorf("GetTemperatureV panicked with %q", msg)
	}
}
