package state

import (
	"encoding/binary"
	"time"
)

// Reading the large tables back, the counterpart of codec_task.go. A
// restore of S6's state (100,000 tasks and jobs) spent 0.7 s of its CPU in
// go-msgpack's reflection and another 0.45 s sharing the strings it had
// just allocated (restore_share.go). The large tables' records are read
// directly (each record type's codec, codec_records.go, through the
// primitives here; finish and pair records by strFields), and each
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

// mpReader reads MessagePack values from one record's body. ok turns
// false at the first value it does not take, and stays false.
type mpReader struct {
	b  []byte
	i  int
	ok bool
}

func (r *mpReader) byte1() byte {
	if !r.ok || r.i >= len(r.b) {
		r.ok = false
		return 0
	}
	c := r.b[r.i]
	r.i++
	return c
}

func (r *mpReader) next(n int) []byte {
	if !r.ok || n < 0 || len(r.b)-r.i < n {
		r.ok = false
		return nil
	}
	s := r.b[r.i : r.i+n : r.i+n]
	r.i += n
	return s
}

func (r *mpReader) u16() int       { b := r.next(2); return int(binary.BigEndian.Uint16(pad(b, 2))) }
func (r *mpReader) u32raw() uint32 { return binary.BigEndian.Uint32(pad(r.next(4), 4)) }

// u32 reads a 32-bit length, which cannot exceed the bytes left: a
// string's bytes, or a collection's elements of a byte at least each.
// (Compared as unsigned, so that a length of 2^31 or more cannot turn
// negative where int is 32 bits.)
func (r *mpReader) u32() int { return r.fits(uint64(r.u32raw())) }

// fits returns n when the body has at least n bytes left, else fails.
func (r *mpReader) fits(n uint64) int {
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
func (r *mpReader) mapLen() int { return r.header(mpFixMap, mpMap16, mpMap32) }

// arrayLen reads an array header.
func (r *mpReader) arrayLen() int { return r.header(mpFixArray, mpArray16, mpArray32) }

// header reads a map's or an array's header: its fixed form (up to 15
// elements), or its 16 or 32-bit one. A collection's elements take a
// byte at least each, so a count over the bytes left is refused.
func (r *mpReader) header(fix, b16, b32 byte) int {
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
func (r *mpReader) strBytes() []byte {
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

// bin reads a bin of at least one byte, copied out of the body.
func (r *mpReader) bin() []byte {
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
		return append([]byte(nil), b...)
	}
	return nil
}

// int reads a signed integer as mpInt writes it.
func (r *mpReader) int() int64 {
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

// uint reads an unsigned integer as mpUint writes it.
func (r *mpReader) uint() uint64 {
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
func (r *mpReader) boolean() bool {
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
func (r *mpReader) time() time.Time {
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

// recordReader reads records with one restore's interner, so that equal
// strings across records share one copy, and equal spec Configs one
// slice. Ids are not interned: each names one record, and load shares
// them with that record where another holds them (a job's task ids, a
// task's job id, an idempotency key's job), without a map of them all.
type recordReader struct {
	in      interner
	configs map[string][]byte
}

func newRecordReader() *recordReader {
	return &recordReader{in: interner{}, configs: map[string][]byte{}}
}

// str reads a str, interned.
func (d *recordReader) str(r *mpReader) string {
	b := r.strBytes()
	if !r.ok || len(b) == 0 {
		return ""
	}
	return d.intern(b)
}

// intern is b as a string, the one already read where an equal one was:
// a map's keys (a worker's approved GPUs, by UUID) are the strings its
// records hold elsewhere.
func (d *recordReader) intern(b []byte) string {
	if s, ok := d.in[string(b)]; ok {
		return s
	}
	s := string(b)
	d.in[s] = s
	return s
}

// plain reads a str that is not interned: one no other record holds.
func plain(r *mpReader) string { return string(r.strBytes()) }

// strs reads a list of strings (nil: nil), interned or not.
func (d *recordReader) strs(r *mpReader, intern bool) []string {
	if r.ok && r.i < len(r.b) && r.b[r.i] == mpNil {
		r.i++
		return nil
	}
	n := r.arrayLen()
	if !r.ok {
		return nil
	}
	// Reserved as go-msgpack reserves: no more ahead than maxInitLen, so
	// a claimed length costs no more than the elements actually sent.
	out := make([]string, 0, min(n, maxInitLen))
	for ; n > 0 && r.ok; n-- {
		if intern {
			out = append(out, d.str(r))
		} else {
			out = append(out, plain(r))
		}
	}
	return out
}

// config reads a spec's Config, shared with an equal one already read.
func (d *recordReader) config(r *mpReader) []byte {
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
	b := r.next(n)
	if !r.ok || n == 0 {
		r.ok = false
		return nil
	}
	if c, ok := d.configs[string(b)]; ok {
		return c
	}
	c := append([]byte(nil), b...)
	d.configs[string(c)] = c
	return c
}

// finish reads a finish record.
func (d *recordReader) finish(body []byte) (snapFinish, bool) {
	var f snapFinish
	ok := strFields(body, []string{"body_hash", "submission", "task"}, &f.BodyHash, &f.Submission, &f.Task)
	return f, ok
}

// pair reads an entry of a string table.
func (d *recordReader) pair(body []byte) (snapPair, bool) {
	var p snapPair
	ok := strFields(body, []string{"key", "value"}, &p.Key, &p.Value)
	return p, ok
}

// strFields reads a map of strs whose keys are among names, each at most
// once, the value of names[i] into *into[i].
func strFields(body []byte, names []string, into ...*string) bool {
	r := &mpReader{b: body, ok: true}
	var seen fields
	for n := r.mapLen(); n > 0 && r.ok; n-- {
		k, found := r.strBytes(), false
		for i, name := range names {
			if string(k) == name {
				found = r.ok && seen.first(uint(i))
				*into[i] = plain(r)
				break
			}
		}
		r.ok = r.ok && found
	}
	return r.ok && r.i == len(body)
}

// read adds the record of kind in body to snap when it is one the reader
// takes (done); when it is not, nothing is added and the caller decodes
// it with go-msgpack, then calls share.
func (d *recordReader) read(kind uint8, body []byte, snap *snapshotV1) (done bool, err error) {
	switch kind {
	case recCredential:
		if c, ok := credentialCodec.decode(d, body); ok {
			snap.Credentials = append(snap.Credentials, c)
			return true, nil
		}
	case recWorker:
		if w, ok := workerCodec.decode(d, body); ok {
			snap.Workers = append(snap.Workers, w)
			return true, nil
		}
	case recTask:
		if t, ok := d.task(body); ok {
			snap.Tasks = append(snap.Tasks, t)
			return true, nil
		}
	case recJob:
		if j, ok := jobCodec.decode(d, body); ok {
			snap.Jobs = append(snap.Jobs, j)
			return true, nil
		}
	case recFinish:
		if f, ok := d.finish(body); ok {
			return true, snap.addFinish(f)
		}
	case recIdempotency:
		if p, ok := d.pair(body); ok {
			return true, snap.addPair(kind, p)
		}
	case recAudit, recRefusal:
		if ev, ok := d.audit(body); ok {
			snap.addAudit(kind, ev)
			return true, nil
		}
	}
	return false, nil
}

// share interns the strings of the record go-msgpack just decoded into
// snap, as the reader would have.
func (d *recordReader) share(kind uint8, snap *snapshotV1) {
	switch kind {
	case recWorker:
		if w := last(snap.Workers); w != nil {
			d.in.shareWorker(w)
		}
	case recJob:
		if j := last(snap.Jobs); j != nil {
			d.in.shareJob(j, d.configs)
		}
	case recTask:
		if t := last(snap.Tasks); t != nil {
			d.in.shareTask(t)
		}
	}
}

func last[T any](list []*T) *T {
	if len(list) == 0 {
		return nil
	}
	return list[len(list)-1]
}

// readMap reads a non-empty map of strs to values read by get, each key
// once.
func readMap[V any](d *recordReader, r *mpReader, get func(*recordReader, *mpReader) V) map[string]V {
	n := r.mapLen()
	if !r.ok || n == 0 {
		r.ok = false
		return nil
	}
	m := make(map[string]V, min(n, maxInitLen)) // see strs
	for ; n > 0 && r.ok; n-- {
		k := d.intern(r.strBytes())
		if _, dup := m[k]; dup {
			r.ok = false
		}
		m[k] = get(d, r)
	}
	return m
}
