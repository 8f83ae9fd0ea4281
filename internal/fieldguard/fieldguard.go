// Package fieldguard fills records by reflection and compares them field
// by field: the guard that a hand-written codec drops no field. Every
// exported field of a record, at any depth, is filled with something
// other than its zero value (so that a field added tomorrow is filled
// too), and Diff names the first path at which two records differ.
package fieldguard

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"time"
)

// A Filler sets every exported field of a value to something other than
// its zero value, at random.
type Filler struct {
	rng *rand.Rand
	n   int // makes strings unique
}

// NewFiller returns a filler whose choices follow seed.
func NewFiller(seed uint64) *Filler {
	return &Filler{rng: rand.New(rand.NewPCG(seed, seed^0x5bd1e995))}
}

var (
	timeType = reflect.TypeFor[time.Time]()
	rawType  = reflect.TypeFor[json.RawMessage]()
)

// fill sets v (addressable) and everything below it. Fields tagged
// json:"-" are left alone: they are not part of a record.
func (f *Filler) fill(v reflect.Value, depth int) {
	if depth > 8 {
		return // a recursive type: deep enough
	}
	switch {
	case v.Type() == timeType:
		// Nanoseconds and a zone other than UTC: the codec keeps the
		// instant, which is what the comparison checks.
		t := time.Unix(1_600_000_000+f.rng.Int64N(1e8), 1+f.rng.Int64N(999_999_998))
		v.Set(reflect.ValueOf(t))
		return
	case v.Type() == rawType:
		f.n++
		v.SetBytes(fmt.Appendf(nil, `{"k":%d}`, f.n))
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1 + f.rng.Int64N(1<<(v.Type().Bits()-2)))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint(1 + f.rng.Uint64N(1<<(v.Type().Bits()-2)))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(0.5 + float64(f.rng.IntN(1000)))
	case reflect.String:
		f.n++
		v.SetString(fmt.Sprintf("v%d-%x", f.n, f.rng.Uint32()))
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		f.fill(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		n := 1 + f.rng.IntN(2)
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			f.fill(s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Array:
		for i := range v.Len() {
			f.fill(v.Index(i), depth+1)
		}
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for range 1 + f.rng.IntN(2) {
			k := reflect.New(v.Type().Key()).Elem()
			f.fill(k, depth+1)
			e := reflect.New(v.Type().Elem()).Elem()
			f.fill(e, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			sf := v.Type().Field(i)
			if !sf.IsExported() || sf.Tag.Get("json") == "-" {
				continue
			}
			f.fill(v.Field(i), depth+1)
		}
	case reflect.Interface:
		// Nothing replicated is an interface; a field that becomes one
		// stays nil here and the comparison still sees it.
	}
}

// Rand is the filler's source, for choices a test makes beside it.
func (f *Filler) Rand() *rand.Rand { return f.rng }

// New returns a *T with every field filled.
func New[T any](f *Filler) *T {
	x := new(T)
	f.fill(reflect.ValueOf(x).Elem(), 0)
	return x
}

// Diff returns the path of the first exported field (at any depth)
// in which a and b differ, and "" when none does. Times compare as
// instants; unexported fields (derived indexes, copy-on-write marks) are
// not compared.
func Diff(a, b any) string {
	return diffValue("", reflect.ValueOf(a), reflect.ValueOf(b))
}

func diffValue(path string, a, b reflect.Value) string {
	if a.IsValid() != b.IsValid() {
		return path + " (one side missing)"
	}
	if !a.IsValid() {
		return ""
	}
	if a.Type() != b.Type() {
		return path + " (types differ)"
	}
	if a.Type() == timeType {
		if !a.Interface().(time.Time).Equal(b.Interface().(time.Time)) {
			return fmt.Sprintf("%s: %v vs %v", path, a.Interface(), b.Interface())
		}
		return ""
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() != b.IsNil() {
			return fmt.Sprintf("%s: nil on one side only", path)
		}
		if a.IsNil() {
			return ""
		}
		return diffValue(path, a.Elem(), b.Elem())
	case reflect.Slice:
		if a.IsNil() != b.IsNil() {
			return fmt.Sprintf("%s: nil on one side only (%d vs %d elements)", path, a.Len(), b.Len())
		}
		fallthrough
	case reflect.Array:
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: %d vs %d elements", path, a.Len(), b.Len())
		}
		for i := range a.Len() {
			if d := diffValue(fmt.Sprintf("%s[%d]", path, i), a.Index(i), b.Index(i)); d != "" {
				return d
			}
		}
		return ""
	case reflect.Map:
		if a.IsNil() != b.IsNil() {
			return fmt.Sprintf("%s: nil on one side only (%d vs %d entries)", path, a.Len(), b.Len())
		}
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: %d vs %d entries", path, a.Len(), b.Len())
		}
		for _, k := range a.MapKeys() {
			if d := diffValue(fmt.Sprintf("%s[%v]", path, k), a.MapIndex(k), b.MapIndex(k)); d != "" {
				return d
			}
		}
		return ""
	case reflect.Struct:
		for i := range a.NumField() {
			sf := a.Type().Field(i)
			if !sf.IsExported() {
				continue
			}
			name := path // an embedded struct's fields read as the record's own
			if !sf.Anonymous {
				name = strings.TrimPrefix(path+"."+sf.Name, ".")
			}
			if d := diffValue(name, a.Field(i), b.Field(i)); d != "" {
				return d
			}
		}
		return ""
	default:
		if !a.Equal(b) {
			return fmt.Sprintf("%s: %v vs %v", path, a.Interface(), b.Interface())
		}
		return ""
	}
}

// ZeroFields lists the exported fields of x, at any depth, left at their
// zero value (a slice is looked into, element by element): what a filler
// must never leave.
func ZeroFields(x any) []string { return zeroFields("", reflect.ValueOf(x)) }

func zeroFields(path string, v reflect.Value) []string {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return []string{path}
		}
		return zeroFields(path, v.Elem())
	case reflect.Slice, reflect.Map:
		if v.Len() == 0 {
			return []string{path}
		}
		if v.Type() == rawType || v.Kind() == reflect.Map {
			return nil
		}
		var out []string
		for i := range v.Len() {
			out = append(out, zeroFields(fmt.Sprintf("%s[%d]", path, i), v.Index(i))...)
		}
		return out
	case reflect.Struct:
		if v.Type() == timeType {
			if v.Interface().(time.Time).IsZero() {
				return []string{path}
			}
			return nil
		}
		var out []string
		for i := range v.NumField() {
			sf := v.Type().Field(i)
			if !sf.IsExported() || sf.Tag.Get("json") == "-" {
				continue
			}
			out = append(out, zeroFields(strings.TrimPrefix(path+"."+sf.Name, "."), v.Field(i))...)
		}
		return out
	default:
		if v.IsZero() {
			return []string{path}
		}
		return nil
	}
}
