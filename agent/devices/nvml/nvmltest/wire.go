//go:build cgo && linux

package nvmltest

import (
	"reflect"
	"strconv"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

var deviceType = reflect.TypeFor[nvml.Device]()

// fillInterface fills the mock server's nvml.Interface. EventSetCreate and
// ErrorString are the fixture's own; methods that take a device, event set
// or other object first forward to its method (see forward).
func (m *Machine) fillInterface() {
	m.fill(&m.srv.Interface, hooks{
		scope: "Interface",
		answers: map[string]any{
			"EventSetCreate": m.eventSetCreate,
			"ErrorString":    func(r nvml.Return) string { return r.Error() },
		},
		derive: forward,
		target: m.interfaceTarget,
		record: "Interface",
	})
}

// fillDevice fills device i: its answers are those of every feature.
func (m *Machine) fillDevice(i int) {
	answers := map[string]any{}
	for _, part := range []map[string]any{
		m.eventAnswers(i),
		m.topologyAnswers(i),
		m.metricAnswers(i),
		m.eccAnswers(i),
		m.processAnswers(i),
		m.clockAnswers(i),
		m.migAnswers(i),
		m.migManageAnswers(i),
	} {
		for name, a := range part {
			if _, dup := answers[name]; dup {
				panic("nvmltest: two answers for Device." + name)
			}
			answers[name] = a
		}
	}
	m.fill(&m.devs[i].Device, hooks{
		scope:   "Device",
		answers: answers,
		target: func(string, reflect.Type) func([]reflect.Value) int {
			return func([]reflect.Value) int { return i }
		},
		record: "Device" + strconv.Itoa(i),
	})
}

// interfaceTarget says which device calls of Interface method name are
// about: the device passed first, or the one named by index, UUID or PCI
// bus ID when looking up a handle. Other calls are about no device.
func (m *Machine) interfaceTarget(name string, typ reflect.Type) func([]reflect.Value) int {
	if typ.NumIn() == 0 {
		return nil
	}
	switch {
	case typ.In(0) == deviceType:
		return func(args []reflect.Value) int {
			if args[0].IsNil() {
				return noDevice
			}
			return m.indexOf(args[0].Interface())
		}
	case name == "DeviceGetHandleByIndex":
		return func(args []reflect.Value) int {
			if i := int(args[0].Int()); i >= 0 && i < len(m.devs) {
				return i
			}
			return noDevice
		}
	case name == "DeviceGetHandleByUUID":
		return m.lookupTarget(func(i int) string { return m.devs[i].UUID })
	case name == "DeviceGetHandleByPciBusId":
		return m.lookupTarget(func(i int) string { return m.devs[i].PciBusID })
	}
	return nil
}

// lookupTarget is a target func for a handle lookup by a string key.
func (m *Machine) lookupTarget(key func(i int) string) func([]reflect.Value) int {
	return func(args []reflect.Value) int {
		for i := range m.devs {
			if key(i) == args[0].String() {
				return i
			}
		}
		return noDevice
	}
}
