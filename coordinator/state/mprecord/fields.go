package mprecord

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// A record type the snapshot writes and reads without reflection is
// declared once, as a codec: its fields, each with its name, how it is
// written (Always, or only when not empty, as go-msgpack's omitempty)
// and how it is read back (Interned or not). The codec writes the fields
// in name order, the order go-msgpack's canonical handle writes them,
// and reads them in any order, each at most once. A field whose value
// the writer hands to go-msgpack (Nested: a task's artifacts, a
// spec's resources) has no reader: a record carrying it is left to
// go-msgpack whole (read.go says why).

// How says how a field is written and read.
type How uint8

const (
	Always    How = 0
	OmitEmpty How = 1 << iota // written only when not empty (omitempty)
	Interned                  // read through the restore's interner
)

// Field is one field of a record of type T.
type Field[T any] struct {
	name string
	put  func(w *Writer, r *record, x *T) // writes it, or nothing when empty and OmitEmpty
	get  func(d *Reader, r *Input, x *T)  // nil: a record with it is left to go-msgpack
}

// Codec writes and reads records of type T.
type Codec[T any] struct {
	fields []Field[T]     // in name order
	index  map[string]int // name to position in fields
}

// New returns the codec of a record type made of fields, each named
// once; it panics on a name listed twice or past the 64th field (a
// declaration error, found as the package that declares it loads).
func New[T any](fields ...Field[T]) *Codec[T] {
	slices.SortFunc(fields, func(a, b Field[T]) int { return strings.Compare(a.name, b.name) })
	c := &Codec[T]{fields: fields, index: make(map[string]int, len(fields))}
	for i, f := range fields {
		if _, dup := c.index[f.name]; dup || i >= 64 {
			panic(fmt.Sprintf("mprecord: codec field %q listed twice or past 64", f.name))
		}
		c.index[f.name] = i
	}
	return c
}

// Append appends x's record to b as go-msgpack writes it.
func (c *Codec[T]) Append(w *Writer, b []byte, x *T) ([]byte, error) {
	r := w.enter()
	defer w.leave()
	for i := range c.fields {
		c.fields[i].put(w, r, x)
	}
	return r.appendTo(b)
}

// Read reads a record's map into x.
func (c *Codec[T]) Read(d *Reader, r *Input, x *T) {
	var seen fields
	next := 0 // the writer's fields come in order: look from the last one on first
	for n := r.mapLen(); n > 0 && r.ok; n-- {
		key := r.strBytes()
		i, ok := -1, false
		for j := next; j < len(c.fields); j++ {
			if c.fields[j].name == string(key) {
				i, ok = j, true
				break
			}
		}
		if !ok {
			i, ok = c.index[string(key)]
		}
		next = i + 1
		if !ok || c.fields[i].get == nil || !seen.first(uint(i)) {
			r.ok = false
			return
		}
		c.fields[i].get(d, r, x)
	}
}

// Decode reads a whole body as one record; ok is false when it is not
// one the codec could have written.
func (c *Codec[T]) Decode(d *Reader, body []byte) (*T, bool) {
	r := &Input{b: body, ok: true}
	x := new(T)
	c.Read(d, r, x)
	return x, r.ok && r.i == len(body)
}

// Name is the field's name.
func (f Field[T]) Name() string { return f.name }

// Fields are the codec's fields, in name order.
func (c *Codec[T]) Fields() []Field[T] { return slices.Clone(c.fields) }

// Str is a string.
func Str[T any](name string, at func(*T) *string, h How) Field[T] {
	return Field[T]{name: name,
		put: func(_ *Writer, r *record, x *T) {
			if v := *at(x); v != "" || h&OmitEmpty == 0 {
				r.key(name)
				r.body = AppendString(r.body, v)
			}
		},
		get: func(d *Reader, r *Input, x *T) {
			if h&Interned != 0 {
				*at(x) = d.Str(r)
			} else {
				*at(x) = Plain(r)
			}
		},
	}
}

// Strings is a list of strings; nil is written as nil.
func Strings[T any](name string, at func(*T) *[]string, h How) Field[T] {
	return Field[T]{name: name,
		put: func(_ *Writer, r *record, x *T) {
			if v := *at(x); len(v) > 0 || h&OmitEmpty == 0 {
				r.key(name)
				r.body = mpStrings(r.body, v)
			}
		},
		get: func(d *Reader, r *Input, x *T) { *at(x) = d.Strs(r, h&Interned != 0) },
	}
}

// Int is an int or an int64, written in its shortest signed form.
func Int[T any, I int | int64](name string, at func(*T) *I, h How) Field[T] {
	return Field[T]{name: name,
		put: func(_ *Writer, r *record, x *T) {
			if v := *at(x); v != 0 || h&OmitEmpty == 0 {
				r.key(name)
				r.body = mpInt(r.body, int64(v))
			}
		},
		get: func(_ *Reader, r *Input, x *T) {
			v := r.int()
			if int64(I(v)) != v {
				r.ok = false
			}
			*at(x) = I(v)
		},
	}
}

// Uint is a uint64.
func Uint[T any](name string, at func(*T) *uint64, h How) Field[T] {
	return Field[T]{name: name,
		put: func(_ *Writer, r *record, x *T) {
			if v := *at(x); v != 0 || h&OmitEmpty == 0 {
				r.key(name)
				r.body = AppendUint(r.body, v)
			}
		},
		get: func(_ *Reader, r *Input, x *T) { *at(x) = r.Uint() },
	}
}

// Bool is a bool.
func Bool[T any](name string, at func(*T) *bool, h How) Field[T] {
	return Field[T]{name: name,
		put: func(_ *Writer, r *record, x *T) {
			if v := *at(x); v || h&OmitEmpty == 0 {
				r.key(name)
				r.body = mpBool(r.body, v)
			}
		},
		get: func(_ *Reader, r *Input, x *T) { *at(x) = r.boolean() },
	}
}

// Time is Always written: go-msgpack does not know omitzero, and
// writes a zero time as nil.
func Time[T any](name string, at func(*T) *time.Time) Field[T] {
	return Field[T]{name: name,
		put: func(_ *Writer, r *record, x *T) {
			r.key(name)
			r.body = mpTime(r.body, *at(x))
		},
		get: func(_ *Reader, r *Input, x *T) { *at(x) = r.time() },
	}
}

// IntPtr is written only when set.
func IntPtr[T any](name string, at func(*T) **int) Field[T] {
	return Field[T]{name: name,
		put: func(_ *Writer, r *record, x *T) {
			if v := *at(x); v != nil {
				r.key(name)
				r.body = mpInt(r.body, int64(*v))
			}
		},
		get: func(_ *Reader, r *Input, x *T) {
			v := r.int()
			n := int(v)
			if int64(n) != v {
				r.ok = false
			}
			*at(x) = &n
		},
	}
}

// BoolPtr is written only when set.
func BoolPtr[T any](name string, at func(*T) **bool) Field[T] {
	return Field[T]{name: name,
		put: func(_ *Writer, r *record, x *T) {
			if v := *at(x); v != nil {
				r.key(name)
				r.body = mpBool(r.body, *v)
			}
		},
		get: func(_ *Reader, r *Input, x *T) {
			v := r.boolean()
			*at(x) = &v
		},
	}
}

// Raw is raw JSON written as bin, only when not empty; shared
// reads it as a spec's Config, shared with an equal one already read.
func Raw[T any](name string, at func(*T) *json.RawMessage, shared bool) Field[T] {
	return Field[T]{name: name,
		put: func(_ *Writer, r *record, x *T) {
			if v := *at(x); len(v) > 0 {
				r.key(name)
				r.body = mpBytes(r.body, v)
			}
		},
		get: func(d *Reader, r *Input, x *T) {
			if shared {
				*at(x) = d.Shared(r)
			} else {
				*at(x) = r.bin()
			}
		},
	}
}

// Nested is a rare value the writer hands to go-msgpack, written
// when present; the reader leaves a record with it to go-msgpack.
func Nested[T any](name string, value func(*T) (v any, present bool)) Field[T] {
	return Field[T]{name: name,
		put: func(w *Writer, r *record, x *T) {
			if v, ok := value(x); ok {
				r.key(name)
				if r.err == nil {
					r.body, r.err = w.nested(r.body, v)
				}
			}
		},
	}
}

// Map is a map of strings to values, written with its keys sorted,
// only when not empty.
func Map[T, V any](name string, at func(*T) *map[string]V, h How, put func([]byte, V) []byte, get func(*Reader, *Input) V) Field[T] {
	return Field[T]{name: name,
		put: func(_ *Writer, r *record, x *T) {
			m := *at(x)
			switch {
			case len(m) == 0 && h&OmitEmpty != 0:
				return
			case m == nil:
				r.key(name)
				r.body = append(r.body, mpNil)
				return
			}
			r.key(name)
			r.body = mpMap(r.body, m, put)
		},
		get: func(d *Reader, r *Input, x *T) {
			if h&OmitEmpty == 0 && r.ok && r.i < len(r.b) {
				switch r.b[r.i] {
				case mpNil:
					r.i++
					*at(x) = nil
					return
				case mpFixMap: // empty, and not nil: the two can mean different things
					r.i++
					*at(x) = map[string]V{}
					return
				}
			}
			*at(x) = readMap(d, r, get)
		},
	}
}

// List is a list of records of type E. With OmitEmpty it is written
// only when not empty (and an empty list is left to go-msgpack); without,
// Always, nil as nil.
func List[T, E any](name string, at func(*T) *[]E, elem *Codec[E], h How) Field[T] {
	return Field[T]{name: name,
		put: func(w *Writer, r *record, x *T) {
			list := *at(x)
			switch {
			case len(list) == 0 && h&OmitEmpty != 0:
				return
			case list == nil:
				r.key(name)
				r.body = append(r.body, mpNil)
				return
			}
			r.key(name)
			r.body = mpArrayLen(r.body, len(list))
			for i := range list {
				var err error
				if r.body, err = elem.Append(w, r.body, &list[i]); err != nil && r.err == nil {
					r.err = err
				}
			}
		},
		get: func(d *Reader, r *Input, x *T) {
			if h&OmitEmpty == 0 && r.ok && r.i < len(r.b) && r.b[r.i] == mpNil {
				r.i++
				*at(x) = nil
				return
			}
			n := r.arrayLen()
			if n == 0 && h&OmitEmpty != 0 {
				r.ok = false
			}
			if !r.ok {
				return
			}
			// Reserved as go-msgpack reserves: no more ahead than
			// MaxInitLen, so a claimed length costs no more than the
			// elements actually sent.
			list := make([]E, 0, min(n, MaxInitLen))
			for ; n > 0 && r.ok; n-- {
				// Read in place: a record read aside and copied in would
				// be garbage of the same size class as the lists, and
				// leave their spans half empty.
				var zero E
				list = append(list, zero)
				elem.Read(d, r, &list[len(list)-1])
			}
			*at(x) = list
		},
	}
}

// Struct is a record of type S held by value, Always written.
func Struct[T, S any](name string, at func(*T) *S, elem *Codec[S]) Field[T] {
	return Field[T]{name: name,
		put: func(w *Writer, r *record, x *T) {
			r.key(name)
			var err error
			if r.body, err = elem.Append(w, r.body, at(x)); err != nil && r.err == nil {
				r.err = err
			}
		},
		get: func(d *Reader, r *Input, x *T) { elem.Read(d, r, at(x)) },
	}
}
