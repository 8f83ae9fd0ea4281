package state

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// A record type the snapshot writes and reads without reflection is
// declared once, as a codec: its fields, each with its name, how it is
// written (always, or only when not empty, as go-msgpack's omitempty)
// and how it is read back (interned or not). The codec writes the fields
// in name order, the order go-msgpack's canonical handle writes them,
// and reads them in any order, each at most once. A field whose value
// the writer hands to go-msgpack (nestedField: a task's artifacts, a
// spec's resources) has no reader: a record carrying it is left to
// go-msgpack whole (codec_read.go says why).

// how says how a field is written and read.
type how uint8

const (
	always    how = 0
	omitEmpty how = 1 << iota // written only when not empty (omitempty)
	interned                  // read through the restore's interner
)

// field is one field of a record of type T.
type field[T any] struct {
	name string
	put  func(w *recordWriter, r *record, x *T)   // writes it, or nothing when empty and omitEmpty
	get  func(d *recordReader, r *mpReader, x *T) // nil: a record with it is left to go-msgpack
}

// recordCodec writes and reads records of type T.
type recordCodec[T any] struct {
	fields []field[T]     // in name order
	index  map[string]int // name to position in fields
}

func newCodec[T any](fields ...field[T]) *recordCodec[T] {
	slices.SortFunc(fields, func(a, b field[T]) int { return strings.Compare(a.name, b.name) })
	c := &recordCodec[T]{fields: fields, index: make(map[string]int, len(fields))}
	for i, f := range fields {
		if _, dup := c.index[f.name]; dup || i >= 64 {
			panic(fmt.Sprintf("state: codec field %q listed twice or past 64", f.name))
		}
		c.index[f.name] = i
	}
	return c
}

// append appends x's record to b as go-msgpack writes it.
func (c *recordCodec[T]) append(w *recordWriter, b []byte, x *T) ([]byte, error) {
	r := w.enter()
	defer w.leave()
	for i := range c.fields {
		c.fields[i].put(w, r, x)
	}
	return r.appendTo(b)
}

// read reads a record's map into x.
func (c *recordCodec[T]) read(d *recordReader, r *mpReader, x *T) {
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

// decode reads a whole body as one record; ok is false when it is not
// one the codec could have written.
func (c *recordCodec[T]) decode(d *recordReader, body []byte) (*T, bool) {
	r := &mpReader{b: body, ok: true}
	x := new(T)
	c.read(d, r, x)
	return x, r.ok && r.i == len(body)
}

func strField[T any](name string, at func(*T) *string, h how) field[T] {
	return field[T]{name: name,
		put: func(_ *recordWriter, r *record, x *T) {
			if v := *at(x); v != "" || h&omitEmpty == 0 {
				r.key(name)
				r.body = mpString(r.body, v)
			}
		},
		get: func(d *recordReader, r *mpReader, x *T) {
			if h&interned != 0 {
				*at(x) = d.str(r)
			} else {
				*at(x) = plain(r)
			}
		},
	}
}

// stringsField is a list of strings; nil is written as nil.
func stringsField[T any](name string, at func(*T) *[]string, h how) field[T] {
	return field[T]{name: name,
		put: func(_ *recordWriter, r *record, x *T) {
			if v := *at(x); len(v) > 0 || h&omitEmpty == 0 {
				r.key(name)
				r.body = mpStrings(r.body, v)
			}
		},
		get: func(d *recordReader, r *mpReader, x *T) { *at(x) = d.strs(r, h&interned != 0) },
	}
}

// intField is an int or an int64, written in its shortest signed form.
func intField[T any, I int | int64](name string, at func(*T) *I, h how) field[T] {
	return field[T]{name: name,
		put: func(_ *recordWriter, r *record, x *T) {
			if v := *at(x); v != 0 || h&omitEmpty == 0 {
				r.key(name)
				r.body = mpInt(r.body, int64(v))
			}
		},
		get: func(_ *recordReader, r *mpReader, x *T) {
			v := r.int()
			if int64(I(v)) != v {
				r.ok = false
			}
			*at(x) = I(v)
		},
	}
}

func uintField[T any](name string, at func(*T) *uint64, h how) field[T] {
	return field[T]{name: name,
		put: func(_ *recordWriter, r *record, x *T) {
			if v := *at(x); v != 0 || h&omitEmpty == 0 {
				r.key(name)
				r.body = mpUint(r.body, v)
			}
		},
		get: func(_ *recordReader, r *mpReader, x *T) { *at(x) = r.uint() },
	}
}

func boolField[T any](name string, at func(*T) *bool, h how) field[T] {
	return field[T]{name: name,
		put: func(_ *recordWriter, r *record, x *T) {
			if v := *at(x); v || h&omitEmpty == 0 {
				r.key(name)
				r.body = mpBool(r.body, v)
			}
		},
		get: func(_ *recordReader, r *mpReader, x *T) { *at(x) = r.boolean() },
	}
}

// timeField is always written: go-msgpack does not know omitzero, and
// writes a zero time as nil.
func timeField[T any](name string, at func(*T) *time.Time) field[T] {
	return field[T]{name: name,
		put: func(_ *recordWriter, r *record, x *T) {
			r.key(name)
			r.body = mpTime(r.body, *at(x))
		},
		get: func(_ *recordReader, r *mpReader, x *T) { *at(x) = r.time() },
	}
}

// intPtrField is written only when set.
func intPtrField[T any](name string, at func(*T) **int) field[T] {
	return field[T]{name: name,
		put: func(_ *recordWriter, r *record, x *T) {
			if v := *at(x); v != nil {
				r.key(name)
				r.body = mpInt(r.body, int64(*v))
			}
		},
		get: func(_ *recordReader, r *mpReader, x *T) {
			v := r.int()
			n := int(v)
			if int64(n) != v {
				r.ok = false
			}
			*at(x) = &n
		},
	}
}

// boolPtrField is written only when set.
func boolPtrField[T any](name string, at func(*T) **bool) field[T] {
	return field[T]{name: name,
		put: func(_ *recordWriter, r *record, x *T) {
			if v := *at(x); v != nil {
				r.key(name)
				r.body = mpBool(r.body, *v)
			}
		},
		get: func(_ *recordReader, r *mpReader, x *T) {
			v := r.boolean()
			*at(x) = &v
		},
	}
}

// rawField is raw JSON written as bin, only when not empty; shared
// reads it as a spec's Config, shared with an equal one already read.
func rawField[T any](name string, at func(*T) *json.RawMessage, shared bool) field[T] {
	return field[T]{name: name,
		put: func(_ *recordWriter, r *record, x *T) {
			if v := *at(x); len(v) > 0 {
				r.key(name)
				r.body = mpBytes(r.body, v)
			}
		},
		get: func(d *recordReader, r *mpReader, x *T) {
			if shared {
				*at(x) = d.config(r)
			} else {
				*at(x) = r.bin()
			}
		},
	}
}

// nestedField is a rare value the writer hands to go-msgpack, written
// when present; the reader leaves a record with it to go-msgpack.
func nestedField[T any](name string, value func(*T) (v any, present bool)) field[T] {
	return field[T]{name: name,
		put: func(w *recordWriter, r *record, x *T) {
			if v, ok := value(x); ok {
				r.key(name)
				if r.err == nil {
					r.body, r.err = w.nested(r.body, v)
				}
			}
		},
	}
}

// mapField is a map of strings to values, written with its keys sorted,
// only when not empty.
func mapField[T, V any](name string, at func(*T) *map[string]V, h how, put func([]byte, V) []byte, get func(*recordReader, *mpReader) V) field[T] {
	return field[T]{name: name,
		put: func(_ *recordWriter, r *record, x *T) {
			m := *at(x)
			switch {
			case len(m) == 0 && h&omitEmpty != 0:
				return
			case m == nil:
				r.key(name)
				r.body = append(r.body, mpNil)
				return
			}
			r.key(name)
			r.body = mpMap(r.body, m, put)
		},
		get: func(d *recordReader, r *mpReader, x *T) {
			if h&omitEmpty == 0 && r.ok && r.i < len(r.b) {
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

// listField is a list of records of type E. With omitEmpty it is written
// only when not empty (and an empty list is left to go-msgpack); without,
// always, nil as nil.
func listField[T, E any](name string, at func(*T) *[]E, elem *recordCodec[E], h how) field[T] {
	return field[T]{name: name,
		put: func(w *recordWriter, r *record, x *T) {
			list := *at(x)
			switch {
			case len(list) == 0 && h&omitEmpty != 0:
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
				if r.body, err = elem.append(w, r.body, &list[i]); err != nil && r.err == nil {
					r.err = err
				}
			}
		},
		get: func(d *recordReader, r *mpReader, x *T) {
			if h&omitEmpty == 0 && r.ok && r.i < len(r.b) && r.b[r.i] == mpNil {
				r.i++
				*at(x) = nil
				return
			}
			n := r.arrayLen()
			if n == 0 && h&omitEmpty != 0 {
				r.ok = false
			}
			if !r.ok {
				return
			}
			// Reserved as go-msgpack reserves: no more ahead than
			// maxInitLen, so a claimed length costs no more than the
			// elements actually sent.
			list := make([]E, 0, min(n, maxInitLen))
			for ; n > 0 && r.ok; n-- {
				// Read in place: a record read aside and copied in would
				// be garbage of the same size class as the lists, and
				// leave their spans half empty.
				var zero E
				list = append(list, zero)
				elem.read(d, r, &list[len(list)-1])
			}
			*at(x) = list
		},
	}
}

// structField is a record of type S held by value, always written.
func structField[T, S any](name string, at func(*T) *S, elem *recordCodec[S]) field[T] {
	return field[T]{name: name,
		put: func(w *recordWriter, r *record, x *T) {
			r.key(name)
			var err error
			if r.body, err = elem.append(w, r.body, at(x)); err != nil && r.err == nil {
				r.err = err
			}
		},
		get: func(d *recordReader, r *mpReader, x *T) { elem.read(d, r, at(x)) },
	}
}
