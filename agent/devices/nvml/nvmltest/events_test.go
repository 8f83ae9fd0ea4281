//go:build cgo && linux

package nvmltest

import (
	"fmt"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

const healthEvents = nvml.EventTypeXidCriticalError | nvml.EventTypeDoubleBitEccError | nvml.EventTypeSingleBitEccError

func TestInjectedEventsArrive(t *testing.T) {
	tests := []struct {
		name     string
		inject   func(m *Machine)
		dev      int
		wantType uint64
		wantData uint64
	}{
		{"xid", func(m *Machine) { m.InjectXid(3, 48) }, 3, nvml.EventTypeXidCriticalError, 48},
		{"double-bit ECC", func(m *Machine) { m.InjectECCDoubleBit(5) }, 5, nvml.EventTypeDoubleBitEccError, 0},
		{"GPU lost", func(m *Machine) { m.InjectGPULost(7) }, 7, nvml.EventTypeXidCriticalError, XidFallenOffBus},
		{"general", func(m *Machine) {
			m.Inject(nvml.EventData{Device: m.Device(1), EventType: nvml.EventTypeSingleBitEccError, EventData: 9,
				GpuInstanceId: NoInstance, ComputeInstanceId: NoInstance})
		}, 1, nvml.EventTypeSingleBitEccError, 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(DGXA100)
			lib := m.Interface()
			set := registeredSet(t, lib, healthEvents)
			tt.inject(m)
			ev, ret := lib.EventSetWait(set, 1000)
			if ret != nvml.SUCCESS {
				t.Fatalf("Wait = %v", ret)
			}
			if ev.Device != m.Device(tt.dev) {
				t.Errorf("event is about %v, want device %d", ev.Device, tt.dev)
			}
			if ev.EventType != tt.wantType || ev.EventData != tt.wantData {
				t.Errorf("event type %d data %d, want %d and %d", ev.EventType, ev.EventData, tt.wantType, tt.wantData)
			}
			if ev.GpuInstanceId != NoInstance || ev.ComputeInstanceId != NoInstance {
				t.Errorf("instance IDs %#x %#x, want NoInstance", ev.GpuInstanceId, ev.ComputeInstanceId)
			}
			if _, ret := set.Wait(0); ret != nvml.ERROR_TIMEOUT {
				t.Errorf("second Wait = %v, want ERROR_TIMEOUT", ret)
			}
		})
	}
}

func TestEventsKeepOrder(t *testing.T) {
	m := New(DGXH100)
	set := registeredSet(t, m.Interface(), healthEvents)
	xids := []uint64{13, 31, 43, 48, 63}
	for i, xid := range xids {
		m.InjectXid(i, xid)
	}
	for i, want := range xids {
		ev, ret := set.Wait(1000)
		if ret != nvml.SUCCESS || ev.EventData != want || ev.Device != m.Device(i) {
			t.Fatalf("event %d: %+v %v, want Xid %d on device %d", i, ev, ret, want, i)
		}
	}
}

func TestEventWaitsForRegistration(t *testing.T) {
	m := New(DGXH100)
	lib := m.Interface()
	set, _ := lib.EventSetCreate()
	m.InjectXid(2, 79)
	m.InjectECCDoubleBit(2)
	if _, ret := set.Wait(0); ret != nvml.ERROR_TIMEOUT {
		t.Fatalf("Wait before registering = %v, want ERROR_TIMEOUT", ret)
	}
	// Only the registered type is delivered; the other stays pending.
	if ret := handle(t, lib, 2).RegisterEvents(nvml.EventTypeXidCriticalError, set); ret != nvml.SUCCESS {
		t.Fatal(ret)
	}
	if ev, ret := set.Wait(0); ret != nvml.SUCCESS || ev.EventData != 79 {
		t.Fatalf("Wait = %+v %v, want the Xid 79 injected earlier", ev, ret)
	}
	if _, ret := set.Wait(0); ret != nvml.ERROR_TIMEOUT {
		t.Fatalf("Wait = %v, want ERROR_TIMEOUT: ECC events are not registered", ret)
	}
	if got := m.Registered(2); got != nvml.EventTypeXidCriticalError {
		t.Errorf("Registered(2) = %d", got)
	}
}

func TestEventGoesToEveryRegisteredSet(t *testing.T) {
	m := New(DGXB200)
	lib := m.Interface()
	a := registeredSet(t, lib, nvml.EventTypeXidCriticalError)
	b := registeredSet(t, lib, nvml.EventTypeXidCriticalError)
	m.InjectXid(0, 94)
	for name, set := range map[string]nvml.EventSet{"a": a, "b": b} {
		if ev, ret := set.Wait(0); ret != nvml.SUCCESS || ev.EventData != 94 {
			t.Errorf("set %s: %+v %v", name, ev, ret)
		}
	}
}

func TestWaitTimesOut(t *testing.T) {
	for _, timeout := range []uint32{0, 1, 30} {
		t.Run(fmt.Sprintf("%dms", timeout), func(t *testing.T) {
			set := registeredSet(t, New(DGXA100).Interface(), healthEvents)
			start := time.Now()
			if _, ret := set.Wait(timeout); ret != nvml.ERROR_TIMEOUT {
				t.Fatalf("Wait = %v, want ERROR_TIMEOUT", ret)
			}
			if took := time.Since(start); took < time.Duration(timeout)*time.Millisecond {
				t.Errorf("returned after %v, before the %d ms timeout", took, timeout)
			}
		})
	}
}

func TestWaitBlocksUntilAnEvent(t *testing.T) {
	m := New(DGXA100)
	set := registeredSet(t, m.Interface(), healthEvents)
	got := make(chan nvml.EventData)
	go func() {
		ev, _ := set.Wait(60_000)
		got <- ev
	}()
	m.InjectXid(4, 74)
	if ev := <-got; ev.EventData != 74 {
		t.Errorf("got %+v", ev)
	}
}

func TestFreeWakesWaiter(t *testing.T) {
	m := New(DGXA100)
	lib := m.Interface()
	set := registeredSet(t, lib, healthEvents)
	got := make(chan nvml.Return)
	go func() {
		_, ret := set.Wait(60_000)
		got <- ret
	}()
	if ret := lib.EventSetFree(set); ret != nvml.SUCCESS {
		t.Fatalf("Free = %v", ret)
	}
	if ret := <-got; ret != nvml.ERROR_INVALID_ARGUMENT {
		t.Errorf("Wait on freed set = %v, want ERROR_INVALID_ARGUMENT", ret)
	}
	if ret := set.Free(); ret != nvml.ERROR_INVALID_ARGUMENT {
		t.Errorf("second Free = %v", ret)
	}
	if got := m.Registered(0); got != 0 {
		t.Errorf("Registered after Free = %d", got)
	}
}

func TestRegisterEvents(t *testing.T) {
	tests := []struct {
		name  string
		setup func(m *Machine)
		mask  uint64
		want  nvml.Return
		wantR uint64 // Registered(1) afterwards
	}{
		{"registers", func(*Machine) {}, healthEvents, nvml.SUCCESS, healthEvents},
		{"failed call", func(m *Machine) { m.FailCall("RegisterEvents", nvml.ERROR_NOT_SUPPORTED) },
			healthEvents, nvml.ERROR_NOT_SUPPORTED, 0},
		{"failed on another device", func(m *Machine) { m.Fail(0, "RegisterEvents", nvml.ERROR_UNKNOWN, Always) },
			healthEvents, nvml.SUCCESS, healthEvents},
		{"unsupported type", func(m *Machine) { m.SetSupportedEvents(All, nvml.EventTypeXidCriticalError) },
			healthEvents, nvml.ERROR_NOT_SUPPORTED, 0},
		{"supported type", func(m *Machine) { m.SetSupportedEvents(1, nvml.EventTypeXidCriticalError) },
			nvml.EventTypeXidCriticalError, nvml.SUCCESS, nvml.EventTypeXidCriticalError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(DGXH100)
			tt.setup(m)
			lib := m.Interface()
			set, _ := lib.EventSetCreate()
			if got := lib.DeviceRegisterEvents(handle(t, lib, 1), tt.mask, set); got != tt.want {
				t.Errorf("DeviceRegisterEvents = %v, want %v", got, tt.want)
			}
			if got := m.Registered(1); got != tt.wantR {
				t.Errorf("Registered = %d, want %d", got, tt.wantR)
			}
		})
	}
}

func TestRegistrationsAddUp(t *testing.T) {
	m := New(DGXH100)
	lib := m.Interface()
	set, _ := lib.EventSetCreate()
	d := handle(t, lib, 6)
	for _, mask := range []uint64{nvml.EventTypeXidCriticalError, nvml.EventTypeDoubleBitEccError} {
		if ret := d.RegisterEvents(mask, set); ret != nvml.SUCCESS {
			t.Fatal(ret)
		}
	}
	want := uint64(nvml.EventTypeXidCriticalError | nvml.EventTypeDoubleBitEccError)
	if got := m.Registered(6); got != want {
		t.Errorf("Registered = %d, want %d", got, want)
	}
	if supported, ret := d.GetSupportedEventTypes(); ret != nvml.SUCCESS || supported != nvml.EventTypeAll {
		t.Errorf("GetSupportedEventTypes = %d %v", supported, ret)
	}
	foreign, _ := New(DGXH100).Interface().EventSetCreate()
	if ret := d.RegisterEvents(nvml.EventTypeXidCriticalError, foreign); ret != nvml.ERROR_INVALID_ARGUMENT {
		t.Errorf("RegisterEvents on another machine's set = %v", ret)
	}
}
