package openapi

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"
	"unicode"
)

// Schema is a JSON Schema (2020-12, the dialect of OpenAPI 3.1) as a plain
// JSON object: encoding/json writes its keys sorted, so equal schemas are
// equal bytes.
type Schema map[string]any

// ErrNameClash is returned when two distinct Go types would take the same
// component name.
var ErrNameClash = errors.New("openapi: two types take one schema name")

// Reflector turns Go types into JSON Schemas the way encoding/json writes
// and reads them: exported fields under their json tag names, embedded
// structs flattened, "-" skipped. Every named struct type becomes one
// entry of Defs, referred to by $ref; everything else is inline.
//
// What a field may hold follows from how encoding/json writes it:
//   - a field without omitempty is always written, so it is required;
//   - a slice, map or pointer without omitempty may be written as null;
//   - json.RawMessage (and any interface) is any JSON value.
//
// Objects refuse properties they do not list (additionalProperties:
// false): a request with an unknown field is refused by the coordinator,
// and an answer with one is not the type it claims to be.
type Reflector struct {
	// Override replaces the schema of a type outright (an enumeration, a
	// type with its own JSON encoding).
	Override map[reflect.Type]Schema
	// Alternatives are other forms a type is accepted in besides its
	// reflected one (a bare digest for an artifact reference): its schema
	// becomes anyOf the reflected form and these.
	Alternatives map[reflect.Type][]Schema
	// Describe gives a component its description, by type.
	Describe map[reflect.Type]string

	defs  map[string]Schema
	names map[reflect.Type]string
	err   error
}

var (
	rawMessageType = reflect.TypeFor[json.RawMessage]()
	timeType       = reflect.TypeFor[time.Time]()
	marshalerType  = reflect.TypeFor[json.Marshaler]()
	textMarshaler  = reflect.TypeFor[encoding.TextMarshaler]()
)

// Ref answers the schema of t: a $ref to its component for a named
// struct (reflecting it on first use), the inline schema otherwise.
func (r *Reflector) Ref(t reflect.Type) Schema {
	return r.schema(t, false)
}

// Defs answers the components reflected so far, by name, and the first
// error met (a name clash, a type JSON cannot carry).
func (r *Reflector) Defs() (map[string]Schema, error) {
	return r.defs, r.err
}

// RefPath is where a component's schema lives in an OpenAPI document.
func RefPath(name string) string { return "#/components/schemas/" + name }

func (r *Reflector) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// schema answers t's schema; nullable says that JSON null is allowed too
// (a slice, map or pointer written without omitempty).
func (r *Reflector) schema(t reflect.Type, nullable bool) Schema {
	if s, ok := r.Override[t]; ok {
		return orNull(clone(s), nullable)
	}
	switch {
	case t == rawMessageType:
		return Schema{"description": "any JSON value"}
	case t == timeType:
		return orNull(Schema{"type": "string", "format": "date-time"}, nullable)
	case t.Kind() != reflect.Pointer && (t.Implements(marshalerType) || t.Implements(textMarshaler)):
		r.fail(fmt.Errorf("openapi: %v has its own JSON encoding; give it an Override", t))
		return Schema{}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return r.schema(t.Elem(), nullable)
	case reflect.Bool:
		return orNull(Schema{"type": "boolean"}, nullable)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return orNull(Schema{"type": "integer"}, nullable)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return orNull(Schema{"type": "integer", "minimum": 0}, nullable)
	case reflect.Float32, reflect.Float64:
		return orNull(Schema{"type": "number"}, nullable)
	case reflect.String:
		return orNull(Schema{"type": "string"}, nullable)
	case reflect.Interface:
		return Schema{"description": "any JSON value"}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			return orNull(Schema{"type": "string", "contentEncoding": "base64"}, nullable)
		}
		return orNull(Schema{"type": "array", "items": r.schema(t.Elem(), false)}, nullable)
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			r.fail(fmt.Errorf("openapi: map key of %v is not a string", t))
		}
		return orNull(Schema{"type": "object", "additionalProperties": r.schema(t.Elem(), false)}, nullable)
	case reflect.Struct:
		if t.Name() == "" {
			return orNull(r.object(t), nullable)
		}
		return orNull(r.component(t), nullable)
	}
	r.fail(fmt.Errorf("openapi: JSON cannot carry %v", t))
	return Schema{}
}

// component reflects a named struct once into Defs and answers a $ref.
func (r *Reflector) component(t reflect.Type) Schema {
	if r.names == nil {
		r.names = map[reflect.Type]string{}
		r.defs = map[string]Schema{}
	}
	name, ok := r.names[t]
	if !ok {
		name = exportedName(t.Name())
		for other, n := range r.names {
			if n == name && other != t {
				r.fail(fmt.Errorf("%w: %v and %v are both %q", ErrNameClash, other, t, name))
			}
		}
		r.names[t] = name
		r.defs[name] = Schema{} // a placeholder while its fields refer back to it
		s := r.object(t)
		if alts := r.Alternatives[t]; len(alts) > 0 {
			s = Schema{"anyOf": append([]any{s}, toAny(alts)...)}
		}
		if d := r.Describe[t]; d != "" {
			s["description"] = d
		}
		r.defs[name] = s
	}
	return Schema{"$ref": RefPath(name)}
}

// object reflects a struct's fields as encoding/json sees them.
func (r *Reflector) object(t reflect.Type) Schema {
	props := Schema{}
	var required []string
	for _, f := range jsonFields(t) {
		nullable := !f.omitEmpty && (f.typ.Kind() == reflect.Slice || f.typ.Kind() == reflect.Map || f.typ.Kind() == reflect.Pointer) && f.typ != rawMessageType
		props[f.name] = r.schema(f.typ, nullable)
		if !f.omitEmpty {
			required = append(required, f.name)
		}
	}
	s := Schema{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		sort.Strings(required)
		s["required"] = required
	}
	return s
}

// field is one JSON member of a struct.
type field struct {
	name      string
	typ       reflect.Type
	omitEmpty bool
	depth     int
}

// jsonFields lists the members encoding/json writes for t: embedded
// structs without a tag are flattened, and of two members with one name
// the shallower wins (at equal depth both are dropped, as encoding/json
// does).
func jsonFields(t reflect.Type) []field {
	var all []field
	var walk func(t reflect.Type, depth int, seen map[reflect.Type]bool)
	walk = func(t reflect.Type, depth int, seen map[reflect.Type]bool) {
		if seen[t] {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			sf := t.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			ft := sf.Type
			if sf.Anonymous && name == "" {
				et := ft
				if et.Kind() == reflect.Pointer {
					et = et.Elem()
				}
				if et.Kind() == reflect.Struct {
					walk(et, depth+1, seen)
					continue
				}
			}
			if !sf.IsExported() {
				continue
			}
			if name == "" {
				name = sf.Name
			}
			omit := strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,")
			all = append(all, field{name: name, typ: ft, omitEmpty: omit, depth: depth})
		}
	}
	walk(t, 0, map[reflect.Type]bool{})
	best := map[string][]field{}
	var order []string
	for _, f := range all {
		if _, ok := best[f.name]; !ok {
			order = append(order, f.name)
		}
		best[f.name] = append(best[f.name], f)
	}
	var out []field
	for _, name := range order {
		fs := best[name]
		sort.SliceStable(fs, func(i, j int) bool { return fs[i].depth < fs[j].depth })
		if len(fs) > 1 && fs[0].depth == fs[1].depth {
			continue
		}
		out = append(out, fs[0])
	}
	return out
}

// orNull widens s to admit null too.
func orNull(s Schema, nullable bool) Schema {
	if !nullable {
		return s
	}
	if typ, ok := s["type"].(string); ok {
		s["type"] = []any{typ, "null"}
		return s
	}
	return Schema{"anyOf": []any{s, Schema{"type": "null"}}}
}

func clone(s Schema) Schema {
	out := make(Schema, len(s))
	for k, v := range s {
		out[k] = v
	}
	return out
}

func toAny(ss []Schema) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func exportedName(name string) string {
	if name == "" {
		return name
	}
	rs := []rune(name)
	rs[0] = unicode.ToUpper(rs[0])
	return string(rs)
}
