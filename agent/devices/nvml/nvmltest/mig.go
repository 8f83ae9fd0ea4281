//go:build cgo && linux

package nvmltest

import (
	"reflect"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// The mock server creates MIG GPU and compute instances with only their
// create/list functions set. The fixture fills each new instance as it is
// created, like a device, before handing it out: calls on it are about its
// parent device (GPU loss and failure rules apply) and unconfigured ones
// return nvml.ERROR_NOT_SUPPORTED.
//
// Filling writes the instance's func fields, which its methods read
// without a lock. So that no goroutine can obtain an instance before it is
// filled, calls that create instances hold Machine.migMu exclusively, and
// calls that hand out existing ones hold it shared.

// migLock is how a call takes Machine.migMu.
type migLock int

const (
	migNone   migLock = iota
	migRead           // the call may hand out existing instances
	migCreate         // the call creates an instance
)

var (
	gpuInstanceType     = reflect.TypeFor[nvml.GpuInstance]()
	computeInstanceType = reflect.TypeFor[nvml.ComputeInstance]()
)

// migLockFor is the migLock of method name of a mock of the given scope.
// Interface methods take none: they forward to the device or instance,
// which takes it.
func migLockFor(scope, name string, typ reflect.Type) migLock {
	switch scope {
	case "Device", "GpuInstance", "ComputeInstance":
	default:
		return migNone
	}
	mentions := false
	for _, t := range outTypes(typ) {
		mentions = mentions || mentionsInstance(t)
	}
	switch {
	case !mentions:
		return migNone
	case strings.HasPrefix(name, "Create"):
		return migCreate
	}
	return migRead
}

// mentionsInstance reports whether a value of type t can carry a GPU or
// compute instance: t is one, a slice of them, or a struct with such a
// field (nvml.ComputeInstanceInfo).
func mentionsInstance(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Interface:
		return t == gpuInstanceType || t == computeInstanceType
	case reflect.Slice:
		return mentionsInstance(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if mentionsInstance(t.Field(i).Type) {
				return true
			}
		}
	}
	return false
}

// adopt fills the instances among the results of a creating call about
// device dev. m.migMu must be held exclusively.
func (m *Machine) adopt(out []reflect.Value, dev int) {
	for _, v := range out {
		if v.Kind() != reflect.Interface || v.IsNil() {
			continue
		}
		inst := v.Interface()
		if m.adopted[inst] {
			continue
		}
		var mockPtr any
		scope := ""
		switch x := inst.(type) {
		case *server.GpuInstance:
			mockPtr, scope = &x.GpuInstance, "GpuInstance"
		case *server.ComputeInstance:
			mockPtr, scope = &x.ComputeInstance, "ComputeInstance"
		default:
			continue
		}
		m.adopted[inst] = true
		var answers map[string]any
		if gi, ok := inst.(*server.GpuInstance); ok {
			answers = gpuInstanceAnswers(gi) // migmanage.go
		}
		m.fill(mockPtr, hooks{
			scope:   scope,
			answers: answers,
			target: func(string, reflect.Type) func([]reflect.Value) int {
				return func([]reflect.Value) int { return dev }
			},
		})
	}
}
