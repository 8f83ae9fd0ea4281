//go:build cgo && linux

package nvmltest

import (
	"reflect"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

var nvmlPkgPath = returnType.PkgPath()

// forward builds the answer of an Interface method that go-nvml implements
// by calling a method of its first argument: DeviceGetUUID(d) is
// d.GetUUID(), EventSetWait(s, t) is s.Wait(t), VgpuTypeGetName(v) is
// v.GetName(). It recognises them by name and signature: the method's name
// is the Interface method's name less the argument type's name (or that
// name less "Id"), and its parameters are the rest. For other methods it
// returns an invalid Value. A nil first argument gives
// nvml.ERROR_INVALID_ARGUMENT.
func forward(name string, typ reflect.Type) reflect.Value {
	if typ.NumIn() == 0 {
		return reflect.Value{}
	}
	recv := typ.In(0)
	if recv.Kind() != reflect.Interface || recv.PkgPath() != nvmlPkgPath {
		return reflect.Value{}
	}
	method := ""
	for _, prefix := range []string{recv.Name(), strings.TrimSuffix(recv.Name(), "Id")} {
		rest, ok := strings.CutPrefix(name, prefix)
		if !ok || rest == "" {
			continue
		}
		if mt, ok := recv.MethodByName(rest); ok && forwards(mt.Type, typ) {
			method = rest
			break
		}
	}
	if method == "" {
		return reflect.Value{}
	}
	return reflect.MakeFunc(typ, func(args []reflect.Value) []reflect.Value {
		if args[0].IsNil() {
			return zeroResults(typ, nvml.ERROR_INVALID_ARGUMENT)
		}
		return call(args[0].MethodByName(method), args[1:])
	})
}

// forwards reports whether method type mt (of an interface, so without a
// receiver) takes fn's parameters after the first and returns its results.
func forwards(mt, fn reflect.Type) bool {
	if mt.NumIn() != fn.NumIn()-1 || mt.NumOut() != fn.NumOut() || mt.IsVariadic() != fn.IsVariadic() {
		return false
	}
	for i := range mt.NumIn() {
		if mt.In(i) != fn.In(i+1) {
			return false
		}
	}
	for i := range mt.NumOut() {
		if mt.Out(i) != fn.Out(i) {
			return false
		}
	}
	return true
}
