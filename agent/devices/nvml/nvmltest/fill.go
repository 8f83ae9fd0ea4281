//go:build cgo && linux

package nvmltest

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// unconfigured is what a fixture answer returns, as its last result, when
// the test has not configured it: the call then falls through to the mock
// server's own function or to the unconfigured default. NVML never returns
// it.
const unconfigured nvml.Return = math.MinInt32

var returnType = reflect.TypeFor[nvml.Return]()

// site is one func field of a go-nvml mock, as the fixture answers it.
type site struct {
	scope string       // "Interface", "Device", "EventSet", "GpuInstance" or "ComputeInstance"
	name  string       // the method name: the field's name less "Func"
	typ   reflect.Type // the field's func type
	// returns reports whether the last result is an nvml.Return; only
	// such calls can be failed.
	returns bool
	// target gives the device a call is about, or noDevice; nil means
	// noDevice always.
	target func(args []reflect.Value) int
	// answer is the fixture's own func, or invalid; it may return
	// unconfigured.
	answer reflect.Value
	// base is the mock server's func, or invalid when it left the field nil.
	base reflect.Value
	// mig is how the call takes Machine.migMu (see mig.go).
	mig migLock
}

// hooks say how fill answers the fields of one mock.
type hooks struct {
	scope string
	// answers are the fixture's funcs by method name; each must have the
	// type of the field it answers.
	answers map[string]any
	// derive, if set, builds an answer for a field answers lacks, or
	// returns an invalid Value.
	derive func(name string, typ reflect.Type) reflect.Value
	// target, if set, says which device calls of a field are about.
	target func(name string, typ reflect.Type) func([]reflect.Value) int
	// record, if set, adds each site to m.sites under record+"."+name.
	record string
}

// fill replaces every exported func field named *Func of the moq mock
// struct that mockPtr points to with a dispatcher (see the package comment
// for the order in which a call is answered). It panics when an answer does
// not match a field, which means go-nvml changed a signature.
func (m *Machine) fill(mockPtr any, h hooks) {
	v := reflect.ValueOf(mockPtr).Elem()
	t := v.Type()
	used := make(map[string]bool, len(h.answers))
	for i := range t.NumField() {
		f := t.Field(i)
		name, ok := strings.CutSuffix(f.Name, "Func")
		if !ok || !f.IsExported() || f.Type.Kind() != reflect.Func {
			continue
		}
		s := &site{
			scope:   h.scope,
			name:    name,
			typ:     f.Type,
			returns: f.Type.NumOut() > 0 && f.Type.Out(f.Type.NumOut()-1) == returnType,
			mig:     migLockFor(h.scope, name, f.Type),
		}
		if fv := v.Field(i); !fv.IsNil() {
			// A copy: fv itself is the field, about to be overwritten.
			s.base = reflect.ValueOf(fv.Interface())
		}
		if a, ok := h.answers[name]; ok {
			av := reflect.ValueOf(a)
			if av.Type() != f.Type {
				panic(fmt.Sprintf("nvmltest: answer for %s.%s has type %s, go-nvml wants %s", h.scope, name, av.Type(), f.Type))
			}
			s.answer = av
			used[name] = true
		} else if h.derive != nil {
			s.answer = h.derive(name, f.Type)
		}
		if h.target != nil {
			s.target = h.target(name, f.Type)
		}
		v.Field(i).Set(reflect.MakeFunc(f.Type, func(args []reflect.Value) []reflect.Value {
			return m.dispatch(s, args)
		}))
		if h.record != "" {
			m.sites[h.record+"."+name] = s
		}
	}
	for name := range h.answers {
		if !used[name] {
			panic(fmt.Sprintf("nvmltest: go-nvml's mock %s has no method %s", h.scope, name))
		}
	}
}

// dispatch answers one call.
func (m *Machine) dispatch(s *site, args []reflect.Value) []reflect.Value {
	switch s.mig {
	case migCreate:
		m.migMu.Lock()
		defer m.migMu.Unlock()
	case migRead:
		m.migMu.RLock()
		defer m.migMu.RUnlock()
	}
	dev := noDevice
	if s.target != nil {
		dev = s.target(args)
	}
	if s.returns {
		if ret, failed := m.intercept(s, dev); failed {
			return zeroResults(s.typ, ret)
		}
	}
	for _, fn := range [...]reflect.Value{s.answer, s.base} {
		if !fn.IsValid() {
			continue
		}
		out := call(fn, args)
		if s.returns && nvml.Return(out[len(out)-1].Int()) == unconfigured {
			continue
		}
		if s.mig == migCreate {
			m.adopt(out, dev)
		}
		return out
	}
	return m.unanswered(s, dev)
}

// intercept applies GPU loss and the failure rules to a call about dev.
func (m *Machine) intercept(s *site, dev int) (nvml.Return, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if dev >= 0 && m.failures.lost[dev] {
		return nvml.ERROR_GPU_IS_LOST, true
	}
	return m.failures.fire(s.scope, s.name, dev)
}

// unanswered is the result of a call nothing configures: a panic under
// Strict, else zero values with nvml.ERROR_NOT_SUPPORTED.
func (m *Machine) unanswered(s *site, dev int) []reflect.Value {
	if m.strict {
		panic(fmt.Sprintf("nvmltest: unexpected call to %s.%s%s: nothing configures it (Strict)", s.scope, s.name, onGPU(dev)))
	}
	if !s.returns && slices.ContainsFunc(outTypes(s.typ), opaque) {
		panic(fmt.Sprintf("nvmltest: %s.%s%s returns a go-nvml handler that only the real library can build; "+
			"call the method it wraps instead", s.scope, s.name, onGPU(dev)))
	}
	return zeroResults(s.typ, nvml.ERROR_NOT_SUPPORTED)
}

// onGPU names device dev for a message, or says nothing for noDevice.
func onGPU(dev int) string {
	if dev < 0 {
		return ""
	}
	return fmt.Sprintf(" on GPU %d", dev)
}

// zeroResults is the zero value of each result of func type typ, with ret
// as the last result when that is an nvml.Return.
func zeroResults(typ reflect.Type, ret nvml.Return) []reflect.Value {
	out := make([]reflect.Value, typ.NumOut())
	for i := range out {
		out[i] = reflect.Zero(typ.Out(i))
	}
	if n := len(out); n > 0 && typ.Out(n-1) == returnType {
		out[n-1] = reflect.ValueOf(ret)
	}
	return out
}

// call calls fn with args, as a variadic call when fn is variadic (args
// then carry the variadic arguments as one slice, as reflect.MakeFunc
// passes them).
func call(fn reflect.Value, args []reflect.Value) []reflect.Value {
	if fn.Type().IsVariadic() {
		return fn.CallSlice(args)
	}
	return fn.Call(args)
}

// outTypes lists the result types of func type typ.
func outTypes(typ reflect.Type) []reflect.Type {
	out := make([]reflect.Type, typ.NumOut())
	for i := range out {
		out[i] = typ.Out(i)
	}
	return out
}

// opaque reports whether t is a struct with fields none of which is
// exported, such as go-nvml's versioned handlers (nvml.TemperatureHandler):
// their zero value wraps no real device, and calling them would call into
// the C library with a nil handle.
func opaque(t reflect.Type) bool {
	if t.Kind() != reflect.Struct || t.NumField() == 0 {
		return false
	}
	for i := range t.NumField() {
		if t.Field(i).IsExported() {
			return false
		}
	}
	return true
}
