package mprecord

import (
	"encoding/binary"
	"math"
	"slices"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"
)

// A snapshot holds one task record per task ever kept, the largest table
// by count. go-msgpack encodes a record by reflection, and boxes every
// time.Time it writes (six a task with one attempt): 1.4 million
// allocations a snapshot of S6's state, garbage a busy coordinator
// collects while the snapshot streams. Writer writes a task record
// directly, the bytes go-msgpack writes for it with the snapshot's handle
// (TestTaskRecordBytesMatchTheCodec compares the two on random tasks):
// a map of the JSON field names sorted by name, fields tagged omitempty
// left out when empty, times as the MessagePack timestamp (nil when
// zero), strings as str, bytes as bin, ints in their shortest signed
// form. The rare nested values are encoded by the codec (Writer).

// msgpack marker bytes used here.
const (
	mpNil      = 0xc0
	mpFalse    = 0xc2
	mpTrue     = 0xc3
	mpBin8     = 0xc4
	mpBin16    = 0xc5
	mpBin32    = 0xc6
	mpExt8     = 0xc7
	mpUint8    = 0xcc
	mpUint16   = 0xcd
	mpUint32   = 0xce
	mpUint64   = 0xcf
	mpInt8     = 0xd0
	mpInt16    = 0xd1
	mpInt32    = 0xd2
	mpInt64    = 0xd3
	mpFixExt4  = 0xd6
	mpFixExt8  = 0xd7
	mpStr8     = 0xd9
	mpStr16    = 0xda
	mpStr32    = 0xdb
	mpArray16  = 0xdc
	mpArray32  = 0xdd
	mpMap16    = 0xde
	mpMap32    = 0xdf
	mpFixStr   = 0xa0
	mpFixArray = 0x90
	mpFixMap   = 0x80
	mpTimeTag  = 0xff // the timestamp extension, -1
)

func mpLen(b []byte, l int, fixMin byte, fixCut int, b8, b16, b32 byte) []byte {
	switch {
	case fixCut > 0 && l < fixCut:
		return append(b, fixMin|byte(l))
	case b8 != 0 && l < 256:
		return append(b, b8, byte(l))
	case l < 65536:
		return binary.BigEndian.AppendUint16(append(b, b16), uint16(l))
	default:
		return binary.BigEndian.AppendUint32(append(b, b32), uint32(l))
	}
}

func AppendString(b []byte, s string) []byte {
	b = mpLen(b, len(s), mpFixStr, 32, mpStr8, mpStr16, mpStr32)
	return append(b, s...)
}

func mpBytes(b []byte, v []byte) []byte {
	if v == nil {
		return append(b, mpNil)
	}
	b = mpLen(b, len(v), 0, 0, mpBin8, mpBin16, mpBin32)
	return append(b, v...)
}

func AppendMapLen(b []byte, n int) []byte {
	return mpLen(b, n, mpFixMap, 16, 0, mpMap16, mpMap32)
}

func mpArrayLen(b []byte, n int) []byte {
	return mpLen(b, n, mpFixArray, 16, 0, mpArray16, mpArray32)
}

func mpBool(b []byte, v bool) []byte {
	if v {
		return append(b, mpTrue)
	}
	return append(b, mpFalse)
}

func AppendUint(b []byte, i uint64) []byte {
	switch {
	case i <= math.MaxInt8:
		return append(b, byte(i))
	case i <= math.MaxUint8:
		return append(b, mpUint8, byte(i))
	case i <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, mpUint16), uint16(i))
	case i <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, mpUint32), uint32(i))
	default:
		return binary.BigEndian.AppendUint64(append(b, mpUint64), i)
	}
}

func mpInt(b []byte, i int64) []byte {
	switch {
	case i > math.MaxInt8 && i <= math.MaxInt16:
		return binary.BigEndian.AppendUint16(append(b, mpInt16), uint16(i))
	case i > math.MaxInt8 && i <= math.MaxInt32:
		return binary.BigEndian.AppendUint32(append(b, mpInt32), uint32(i))
	case i > math.MaxInt8:
		return binary.BigEndian.AppendUint64(append(b, mpInt64), uint64(i))
	case i >= -32:
		return append(b, byte(i))
	case i >= math.MinInt8:
		return append(b, mpInt8, byte(i))
	case i >= math.MinInt16:
		return binary.BigEndian.AppendUint16(append(b, mpInt16), uint16(i))
	case i >= math.MinInt32:
		return binary.BigEndian.AppendUint32(append(b, mpInt32), uint32(i))
	default:
		return binary.BigEndian.AppendUint64(append(b, mpInt64), uint64(i))
	}
}

func mpTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(b, mpNil)
	}
	t = t.UTC()
	sec, nsec := t.Unix(), uint64(t.Nanosecond())
	if sec >= 0 && sec>>34 == 0 {
		data := nsec<<34 | uint64(sec)
		if data&0xffffffff00000000 == 0 {
			return binary.BigEndian.AppendUint32(append(b, mpFixExt4, mpTimeTag), uint32(data))
		}
		return binary.BigEndian.AppendUint64(append(b, mpFixExt8, mpTimeTag), data)
	}
	b = append(b, mpExt8, 12, mpTimeTag)
	b = binary.BigEndian.AppendUint32(b, uint32(nsec))
	return binary.BigEndian.AppendUint64(b, uint64(sec))
}

func mpStrings(b []byte, list []string) []byte {
	if list == nil {
		return append(b, mpNil)
	}
	b = mpArrayLen(b, len(list))
	for _, s := range list {
		b = AppendString(b, s)
	}
	return b
}

// mpMap appends m as go-msgpack writes it with the snapshot's handle:
// keys sorted, each value by put.
func mpMap[V any](b []byte, m map[string]V, put func([]byte, V) []byte) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = AppendMapLen(b, len(m))
	for _, k := range keys {
		b = put(AppendString(b, k), m[k])
	}
	return b
}

// Writer writes the records of the large tables without
// reflection (each record type's Codec). Its scratch records, one a level of
// nesting (a task, its attempts), are reused from one record to the
// next; the rare nested values go through go-msgpack (nested).
type Writer struct {
	scratch []*record
	depth   int
	buf     []byte
	enc     *codec.Encoder
}

// NewWriter returns a writer whose nested values go-msgpack encodes
// with h.
func NewWriter(h *codec.MsgpackHandle) *Writer {
	w := &Writer{}
	w.enc = codec.NewEncoderBytes(&w.buf, h)
	return w
}

// enter returns an empty scratch record for the next level of nesting;
// leave gives it back.
func (w *Writer) enter() *record {
	if w.depth == len(w.scratch) {
		w.scratch = append(w.scratch, &record{})
	}
	r := w.scratch[w.depth]
	w.depth++
	r.n, r.body, r.err = 0, r.body[:0], nil
	return r
}

func (w *Writer) leave() { w.depth-- }

// nested appends v as go-msgpack encodes it.
func (w *Writer) nested(b []byte, v any) ([]byte, error) {
	w.buf = w.buf[:0]
	w.enc.ResetBytes(&w.buf)
	if err := w.enc.Encode(v); err != nil {
		return b, err
	}
	return append(b, w.buf...), nil
}

// record builds one record's map: its fields are added in name order,
// the optional ones (omitempty) only when not empty, and the map's
// length is counted as they come.
type record struct {
	n    int
	body []byte
	err  error
}

func (r *record) key(name string) {
	r.n++
	r.body = AppendString(r.body, name)
}

// appendTo appends the record's map to b.
func (r *record) appendTo(b []byte) ([]byte, error) {
	return append(AppendMapLen(b, r.n), r.body...), r.err
}
