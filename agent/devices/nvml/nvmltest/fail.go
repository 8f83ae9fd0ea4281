//go:build cgo && linux

package nvmltest

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

// Mode says which calls a failure rule fails.
type Mode int

const (
	// Always fails every matching call.
	Always Mode = 0
	// Once fails the next matching call only.
	Once Mode = -1
)

// After lets the next n matching calls through and fails every matching
// call after them. After(0) is Always.
func After(n int) Mode {
	if n < 0 {
		panic(fmt.Sprintf("nvmltest: After(%d): n must not be negative", n))
	}
	return Mode(n)
}

// rule is one failure rule.
type rule struct {
	dev    int    // a device index or All
	method string // "Name" or "Scope.Name"
	ret    nvml.Return
	pass   int // matching calls still to let through
	left   int // failures still to give; -1 for no limit
}

// failures holds the failure rules and lost GPUs of a machine.
type failures struct {
	rules []*rule
	lost  []bool // by device index
}

// Fail makes calls of method return ret, as mode says, for device dev or,
// with All, for every call of method wherever it is made: on any device, on
// the Interface or on an event set. method is a method name of
// nvml.Interface, nvml.Device, nvml.EventSet, nvml.GpuInstance or
// nvml.ComputeInstance, such as "GetUUID"; "Device.GetUUID" names the one of
// that type only. A failed call returns zero values and ret.
//
// Interface calls are about a device when they take its handle first
// (DeviceGetUUID(d)) or look it up (DeviceGetHandleByIndex(i), ByUUID,
// ByPciBusId); MIG instance calls are about their parent device. The rule's
// count of calls let through (After) counts calls no earlier rule failed.
// Rules are tried in the order they were set; the first that fails a call
// wins. Fail panics on an unknown method or device, or a method without an
// nvml.Return result.
func (m *Machine) Fail(dev int, method string, ret nvml.Return, mode Mode) {
	m.checkIndex(dev, true)
	checkMethod(method)
	if mode < Once {
		panic(fmt.Sprintf("nvmltest: invalid Mode %d (use Always, Once or After)", mode))
	}
	r := &rule{dev: dev, method: method, ret: ret, left: -1}
	if mode == Once {
		r.left = 1
	} else {
		r.pass = int(mode)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.failures.rules = append(m.failures.rules, r)
}

// FailCall makes every call of method return ret: Fail(All, method, ret,
// Always).
func (m *Machine) FailCall(method string, ret nvml.Return) {
	m.Fail(All, method, ret, Always)
}

// ClearFailures removes every failure rule. Lost GPUs stay lost.
func (m *Machine) ClearFailures() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.failures.rules = nil
}

// fire applies the rules to a call of scope.name about dev: it fails the
// call when a rule says so, and otherwise counts the call as let through
// by every rule that matches it.
func (f *failures) fire(scope, name string, dev int) (nvml.Return, bool) {
	var matching []*rule
	for _, r := range f.rules {
		if (r.method == name || r.method == scope+"."+name) && (r.dev == All || r.dev == dev) && r.left != 0 {
			matching = append(matching, r)
		}
	}
	for _, r := range matching {
		if r.pass == 0 {
			if r.left > 0 {
				r.left--
			}
			return r.ret, true
		}
	}
	for _, r := range matching {
		r.pass--
	}
	return nvml.SUCCESS, false
}

// failable holds every method name Fail accepts, bare and qualified by its
// type, mapped to whether it has an nvml.Return result.
var failable = func() map[string]bool {
	names := map[string]bool{}
	for scope, t := range map[string]reflect.Type{
		"Interface":       reflect.TypeFor[mock.Interface](),
		"Device":          reflect.TypeFor[mock.Device](),
		"EventSet":        reflect.TypeFor[mock.EventSet](),
		"GpuInstance":     reflect.TypeFor[mock.GpuInstance](),
		"ComputeInstance": reflect.TypeFor[mock.ComputeInstance](),
	} {
		for i := range t.NumField() {
			f := t.Field(i)
			name, ok := strings.CutSuffix(f.Name, "Func")
			if !ok || !f.IsExported() || f.Type.Kind() != reflect.Func {
				continue
			}
			returns := f.Type.NumOut() > 0 && f.Type.Out(f.Type.NumOut()-1) == returnType
			names[scope+"."+name] = returns
			names[name] = names[name] || returns
		}
	}
	return names
}()

// checkMethod panics unless Fail can fail method.
func checkMethod(method string) {
	returns, ok := failable[method]
	switch {
	case !ok:
		panic(fmt.Sprintf("nvmltest: no NVML method %q", method))
	case !returns:
		panic(fmt.Sprintf("nvmltest: %s cannot fail: it returns no nvml.Return", method))
	}
}
