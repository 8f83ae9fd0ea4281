package mprecord

import (
	"encoding/binary"
	"time"
)

// Reading the large tables back, the counterpart of write.go. A
// restore of S6's state (100,000 tasks and jobs) spent 0.7 s of its CPU in
// go-msgpack's reflection and another 0.45 s sharing the strings it had
// just allocated (state/snapcodec/share.go). The large tables' records are read
// directly (each record type's codec through the primitives here; flat records
// of strings by StrFields), and each
// repeated string is taken from the restore's interner as it is read, so
// a repeated value is never allocated at all.
//
// The reader reads only what recordWriter writes: a map of known field names,
// each once, each value in the form the writer gives it. Anything else (a
// field it does not know, a nil where the writer writes a value, a value
// the writer hands to go-msgpack such as artifacts or a spec's resources,
// a length that runs past the body) makes it give up, and the record is
// decoded by go-msgpack as before, which decides what it means or why it
// is refused. Both yield the same record for what the writer writes
// (TestTaskRecordBytesMatchTheCodec and its neighbours), so which one read a record never
// shows.

// Input reads MessagePack values from one record's body. ok turns
// false at the first value it does not take, and stays false.
type Input struct {
	b  []byte
	i  int
	ok bool
}

func (r *Input) byte1() byte {
	if !r.ok || r.i >= len(r.b) {
		r.ok = false
		return 0
	}
	c := r.b[r.i]
	r.i++
	return c
}

func (r *Input) next(n int) []byte {
	if !r.ok || n < 0 || len(r.b)-r.i < n {
		r.ok = false
		return nil
	}
	s := r.b[r.i : r.i+n : r.i+n]
	r.i += n
	return s
}

func (r *Input) u16() int       { b := r.next(2); return int(binary.BigEndian.Uint16(pad(b, 2))) }
func (r *Input) u32raw() uint32 { return binary.BigEndian.Uint32(pad(r.next(4), 4)) }

// u32 reads a 32-bit length, which cannot exceed the bytes left: a
// string's bytes, or a collection's elements of a byte at least each.
// (Compared as unsigned, so that a length of 2^31 or more cannot turn
// negative where int is 32 bits.)
func (r *Input) u32() int { return r.fits(uint64(r.u32raw())) }

// fits returns n when the body has at least n bytes left, else fails.
func (r *Input) fits(n uint64) int {
	if !r.ok || n > uint64(len(r.b)-r.i) {
		r.ok = false
		return 0
	}
	return int(n)
}

// pad keeps the reads above from panicking once the reader has failed.
func pad(b []byte, n int) []byte {
	if len(b) < n {
		return make([]byte, n)
	}
	return b
}

// mapLen reads a map header.
func (r *Input) mapLen() int { return r.header(mpFixMap, mpMap16, mpMap32) }

// arrayLen reads an array header.
func (r *Input) arrayLen() int { return r.header(mpFixArray, mpArray16, mpArray32) }

// header reads a map's or an array's header: its fixed form (up to 15
// elements), or its 16 or 32-bit one. A collection's elements take a
// byte at least each, so a count over the bytes left is refused.
func (r *Input) header(fix, b16, b32 byte) int {
	switch c := r.byte1(); {
	case c&0xf0 == fix:
		return r.fits(uint64(c & 0x0f))
	case c == b16:
		return r.fits(uint64(r.u16()))
	case c == b32:
		return r.u32()
	}
	r.ok = false
	return 0
}

// strBytes reads a str and returns its bytes, in the body.
func (r *Input) strBytes() []byte {
	var n int
	switch c := r.byte1(); {
	case c&0xe0 == mpFixStr:
		n = int(c & 0x1f)
	case c == mpStr8:
		n = int(r.byte1())
	case c == mpStr16:
		n = r.u16()
	case c == mpStr32:
		n = r.u32()
	default:
		r.ok = false
	}
	return r.next(n)
}

// binBytes reads a bin of at least one byte and returns its bytes, in
// the body.
func (r *Input) binBytes() []byte {
	var n int
	switch r.byte1() {
	case mpBin8:
		n = int(r.byte1())
	case mpBin16:
		n = r.u16()
	case mpBin32:
		n = r.u32()
	default:
		r.ok = false
	}
	if n == 0 {
		r.ok = false
	}
	if b := r.next(n); r.ok {
		return b
	}
	return nil
}

// bin reads a bin of at least one byte, copied out of the body.
func (r *Input) bin() []byte {
	if b := r.binBytes(); b != nil {
		return append([]byte(nil), b...)
	}
	return nil
}

// int reads a signed integer as mpInt writes it.
func (r *Input) int() int64 {
	switch c := r.byte1(); {
	case c <= 0x7f:
		return int64(c)
	case c >= 0xe0:
		return int64(int8(c))
	case c == mpInt8:
		return int64(int8(r.byte1()))
	case c == mpInt16:
		return int64(int16(r.u16()))
	case c == mpInt32:
		return int64(int32(r.u32raw()))
	case c == mpInt64:
		b := r.next(8)
		return int64(binary.BigEndian.Uint64(pad(b, 8)))
	}
	r.ok = false
	return 0
}

// Uint reads an unsigned integer as mpUint writes it.
func (r *Input) Uint() uint64 {
	switch c := r.byte1(); {
	case c <= 0x7f:
		return uint64(c)
	case c == mpUint8:
		return uint64(r.byte1())
	case c == mpUint16:
		return uint64(r.u16())
	case c == mpUint32:
		return uint64(r.u32raw())
	case c == mpUint64:
		return binary.BigEndian.Uint64(pad(r.next(8), 8))
	}
	r.ok = false
	return 0
}

// boolean reads true or false.
func (r *Input) boolean() bool {
	switch r.byte1() {
	case mpTrue:
		return true
	case mpFalse:
		return false
	}
	r.ok = false
	return false
}

// time reads a time as mpTime writes it (nil: the zero time), into the
// value go-msgpack gives it: UTC.
func (r *Input) time() time.Time {
	c := r.byte1()
	if c == mpNil {
		return time.Time{}
	}
	n := 0
	switch {
	case c == mpFixExt4:
		n = 4
	case c == mpFixExt8:
		n = 8
	case c == mpExt8 && r.byte1() == 12:
		n = 12
	}
	if n == 0 || r.byte1() != mpTimeTag {
		r.ok = false
		return time.Time{}
	}
	b := pad(r.next(n), n)
	switch n {
	case 4:
		return time.Unix(int64(binary.BigEndian.Uint32(b)), 0).UTC()
	case 8:
		v := binary.BigEndian.Uint64(b)
		return time.Unix(int64(v&0x00000003ffffffff), int64(v>>34)).UTC()
	default:
		return time.Unix(int64(binary.BigEndian.Uint64(b[4:])), int64(binary.BigEndian.Uint32(b))).UTC()
	}
}

// fields tracks which fields of one map were read, so that a field
// listed twice is left to go-msgpack.
type fields uint64

// first marks field f read and reports whether it was not already.
func (s *fields) first(f uint) bool {
	if *s&(1<<f) != 0 {
		return false
	}
	*s |= 1 << f
	return true
}

// Reader reads records with one restore's interner, so that equal
// strings across records share one copy, and equal bins (a spec's
// Config) one slice. Ids are not interned: each names one record, and
// the caller shares them with that record where another holds them,
// without a map of them all.
type Reader struct {
	in      map[string]string
	configs map[string][]byte
}

func NewReader() *Reader {
	return &Reader{in: map[string]string{}, configs: map[string][]byte{}}
}

// Str reads a str, interned.
func (d *Reader) Str(r *Input) string {
	b := r.strBytes()
	if !r.ok || len(b) == 0 {
		return ""
	}
	return d.Intern(b)
}

// Intern is b as a string, the one already read where an equal one was:
// a map's keys (a worker's approved GPUs, by UUID) are the strings its
// records hold elsewhere.
func (d *Reader) Intern(b []byte) string {
	if s, ok := d.in[string(b)]; ok {
		return s
	}
	s := string(b)
	d.in[s] = s
	return s
}

// Plain reads a str that is not interned: one no other record holds.
func Plain(r *Input) string { return string(r.strBytes()) }

// Strs reads a list of strings (nil: nil), interned or not.
func (d *Reader) Strs(r *Input, intern bool) []string {
	if r.ok && r.i < len(r.b) && r.b[r.i] == mpNil {
		r.i++
		return nil
	}
	n := r.arrayLen()
	if !r.ok {
		return nil
	}
	// Reserved as go-msgpack reserves: no more ahead than MaxInitLen, so
	// a claimed length costs no more than the elements actually sent.
	out := make([]string, 0, min(n, MaxInitLen))
	for ; n > 0 && r.ok; n-- {
		if intern {
			out = append(out, d.Str(r))
		} else {
			out = append(out, Plain(r))
		}
	}
	return out
}

// Shared reads a bin of at least one byte, shared with an equal one
// already read (a spec's Config: one slice for a thousand equal ones).
func (d *Reader) Shared(r *Input) []byte {
	b := r.binBytes()
	if b == nil {
		return nil
	}
	if c, ok := d.configs[string(b)]; ok {
		return c
	}
	c := append([]byte(nil), b...)
	d.configs[string(c)] = c
	return c
}

// StrFields reads a map of strs whose keys are among names, each at most
// once, the value of names[i] into *into[i].
func StrFields(body []byte, names []string, into ...*string) bool {
	r := &Input{b: body, ok: true}
	var seen fields
	for n := r.mapLen(); n > 0 && r.ok; n-- {
		k, found := r.strBytes(), false
		for i, name := range names {
			if string(k) == name {
				found = r.ok && seen.first(uint(i))
				*into[i] = Plain(r)
				break
			}
		}
		r.ok = r.ok && found
	}
	return r.ok && r.i == len(body)
}

// readMap reads a non-empty map of strs to values read by get, each key
// once.
func readMap[V any](d *Reader, r *Input, get func(*Reader, *Input) V) map[string]V {
	n := r.mapLen()
	if !r.ok || n == 0 {
		r.ok = false
		return nil
	}
	m := make(map[string]V, min(n, MaxInitLen)) // see strs
	for ; n > 0 && r.ok; n-- {
		k := d.Intern(r.strBytes())
		if _, dup := m[k]; dup {
			r.ok = false
		}
		m[k] = get(d, r)
	}
	return m
}

// Strings is the interner's table: every string read interned so far,
// for a record decoded by other means to share them.
func (d *Reader) Strings() map[string]string { return d.in }

// SharedBins is the table of bins read shared so far.
func (d *Reader) SharedBins() map[string][]byte { return d.configs }
