package mprecord

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/hashicorp/go-msgpack/v2/codec"
)

// sample is a record with a field of every kind the package writes.
type sample struct {
	Name   string            `json:"name"`
	Note   string            `json:"note,omitempty"`
	Tags   []string          `json:"tags,omitempty"`
	Count  int               `json:"count"`
	Big    int64             `json:"big,omitempty"`
	Seq    uint64            `json:"seq"`
	On     bool              `json:"on,omitempty"`
	At     time.Time         `json:"at"`
	Exit   *int              `json:"exit,omitempty"`
	Ok     *bool             `json:"ok,omitempty"`
	Config json.RawMessage   `json:"config,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
	Sizes  map[string]uint64 `json:"sizes"`
	Parts  []part            `json:"parts,omitempty"`
	Head   part              `json:"head"`
	Extra  *part             `json:"extra,omitempty"`
}

type part struct {
	ID   string `json:"id"`
	Size int    `json:"size,omitempty"`
}

var partCodec = New(
	Str("id", func(p *part) *string { return &p.ID }, Always),
	Int("size", func(p *part) *int { return &p.Size }, OmitEmpty),
)

var sampleCodec = New(
	Str("name", func(s *sample) *string { return &s.Name }, Interned),
	Str("note", func(s *sample) *string { return &s.Note }, OmitEmpty),
	Strings("tags", func(s *sample) *[]string { return &s.Tags }, OmitEmpty|Interned),
	Int("count", func(s *sample) *int { return &s.Count }, Always),
	Int("big", func(s *sample) *int64 { return &s.Big }, OmitEmpty),
	Uint("seq", func(s *sample) *uint64 { return &s.Seq }, Always),
	Bool("on", func(s *sample) *bool { return &s.On }, OmitEmpty),
	Time("at", func(s *sample) *time.Time { return &s.At }),
	IntPtr("exit", func(s *sample) **int { return &s.Exit }),
	BoolPtr("ok", func(s *sample) **bool { return &s.Ok }),
	Raw("config", func(s *sample) *json.RawMessage { return &s.Config }, true),
	Map("labels", func(s *sample) *map[string]string { return &s.Labels }, OmitEmpty, AppendString,
		func(d *Reader, r *Input) string { return d.Str(r) }),
	Map("sizes", func(s *sample) *map[string]uint64 { return &s.Sizes }, Always, AppendUint,
		func(_ *Reader, r *Input) uint64 { return r.Uint() }),
	List("parts", func(s *sample) *[]part { return &s.Parts }, partCodec, OmitEmpty),
	Struct("head", func(s *sample) *part { return &s.Head }, partCodec),
	Nested("extra", func(s *sample) (any, bool) { return s.Extra, s.Extra != nil }),
)

func handle() *codec.MsgpackHandle {
	h := &codec.MsgpackHandle{}
	h.WriteExt = true
	h.Canonical = true
	h.MaxInitLen = MaxInitLen
	return h
}

func goMsgpack(t *testing.T, x any) []byte {
	t.Helper()
	var b []byte
	if err := codec.NewEncoderBytes(&b, handle()).Encode(x); err != nil {
		t.Fatal(err)
	}
	return b
}

func samples() []sample {
	exit, ok := -3, true
	at := time.Date(2026, 12, 7, 10, 0, 0, 123, time.UTC)
	return []sample{
		{Sizes: nil},
		{Name: "a", Count: 1, Seq: 2, At: at, Sizes: map[string]uint64{}, Head: part{ID: "h"}},
		{Name: "full", Note: "n", Tags: []string{"x", "y"}, Count: -70000, Big: 1 << 40, Seq: 1 << 33, On: true,
			At: time.Unix(-5, 0).UTC(), Exit: &exit, Ok: &ok, Config: json.RawMessage(`{"k":1}`),
			Labels: map[string]string{"b": "2", "a": "1"}, Sizes: map[string]uint64{"GPU-1": 81920},
			Parts: []part{{ID: "p1", Size: 300}, {ID: "p2"}}, Head: part{ID: "h", Size: 1}},
		{Name: strings.Repeat("long", 20), At: time.Unix(1<<35, 7).UTC(), Sizes: map[string]uint64{"x": 1<<64 - 1}},
	}
}

// The codec writes the bytes go-msgpack's canonical handle writes for
// the same record, and reads back what go-msgpack reads.
func TestCodecWritesWhatGoMsgpackWrites(t *testing.T) {
	w, d := NewWriter(handle()), NewReader()
	for i, x := range samples() {
		got, err := sampleCodec.Append(w, nil, &x)
		if err != nil {
			t.Fatal(err)
		}
		if want := goMsgpack(t, x); !bytes.Equal(got, want) {
			t.Fatalf("sample %d:\n got %x\nwant %x", i, got, want)
		}
		back, ok := sampleCodec.Decode(d, got)
		if !ok {
			t.Fatalf("sample %d: the reader refused the writer's bytes", i)
		}
		var dec sample
		if err := codec.NewDecoderBytes(got, handle()).Decode(&dec); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(*back, dec) {
			t.Fatalf("sample %d: the reader read\n%+v\ngo-msgpack\n%+v", i, *back, dec)
		}
	}
}

// A nested value is written through go-msgpack and has no reader: a
// record carrying one is refused, for the caller to decode whole.
func TestNestedValueIsLeftToGoMsgpack(t *testing.T) {
	x := sample{Name: "n", Extra: &part{ID: "e"}}
	b, err := sampleCodec.Append(NewWriter(handle()), nil, &x)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, goMsgpack(t, x)) {
		t.Fatal("a nested value is not written as go-msgpack writes it")
	}
	if _, ok := sampleCodec.Decode(NewReader(), b); ok {
		t.Fatal("the reader took a record with a nested value")
	}
}

// Anything the writer does not write is refused, not guessed at.
func TestReaderRefusesWhatTheWriterDoesNotWrite(t *testing.T) {
	good, _ := partCodec.Append(NewWriter(handle()), nil, &part{ID: "p", Size: 2})
	cases := map[string][]byte{
		"unknown field":  goMsgpack(t, map[string]any{"id": "p", "colour": "red"}),
		"field twice":    AppendString(AppendString(AppendString(AppendString([]byte{0x82}, "id"), "a"), "id"), "b"),
		"wrong type":     goMsgpack(t, map[string]any{"id": 7}),
		"cut short":      good[:len(good)-1],
		"trailing bytes": append(append([]byte(nil), good...), 0xc0),
		"not a map":      goMsgpack(t, []string{"id"}),
		"empty":          nil,
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			if p, ok := partCodec.Decode(NewReader(), b); ok {
				t.Fatalf("read %+v from %x", *p, b)
			}
		})
	}
}

// A header's claimed length is checked against the bytes left, so a
// record of a few bytes claiming billions of elements allocates nothing
// of that size and is refused.
func TestClaimedLengthsAreBounded(t *testing.T) {
	for _, b := range [][]byte{
		{0xdf, 0xff, 0xff, 0xff, 0xff},
		append(AppendString([]byte{0x81}, "parts"), 0xdd, 0x7f, 0xff, 0xff, 0xff),
		append(AppendString([]byte{0x81}, "name"), 0xdb, 0x80, 0, 0, 0),
		append(AppendString([]byte{0x81}, "sizes"), 0xdf, 0x10, 0, 0, 0),
	} {
		allocs := testing.AllocsPerRun(10, func() { sampleCodec.Decode(NewReader(), b) })
		if _, ok := sampleCodec.Decode(NewReader(), b); ok {
			t.Fatalf("%x read", b)
		}
		if allocs > 20 {
			t.Fatalf("%x: %.0f allocations", b, allocs)
		}
	}
}

// Interned strings and shared bins are one copy across records.
func TestReaderSharesRepeatedValues(t *testing.T) {
	w, d := NewWriter(handle()), NewReader()
	x := sample{Name: "same", Config: json.RawMessage(`{"a":1}`), Sizes: map[string]uint64{"GPU-1": 1}}
	b1, _ := sampleCodec.Append(w, nil, &x)
	b2, _ := sampleCodec.Append(w, nil, &x)
	r1, ok1 := sampleCodec.Decode(d, b1)
	r2, ok2 := sampleCodec.Decode(d, b2)
	if !ok1 || !ok2 {
		t.Fatal("not read")
	}
	if unsafe.StringData(r1.Name) != unsafe.StringData(r2.Name) {
		t.Error("an interned string read twice is two copies")
	}
	if unsafe.SliceData(r1.Config) != unsafe.SliceData(r2.Config) {
		t.Error("a shared bin read twice is two copies")
	}
	var k1, k2 string
	for k := range r1.Sizes {
		k1 = k
	}
	for k := range r2.Sizes {
		k2 = k
	}
	if unsafe.StringData(k1) != unsafe.StringData(k2) {
		t.Error("a map key read twice is two copies")
	}
	if d.Strings()["same"] != "same" || len(d.SharedBins()) != 1 {
		t.Errorf("tables: %v, %d bins", d.Strings(), len(d.SharedBins()))
	}
}

// StrFields reads a flat record of strings, each named field once.
func TestStrFields(t *testing.T) {
	b := goMsgpack(t, map[string]string{"key": "k", "value": "v"})
	var k, v string
	if !StrFields(b, []string{"key", "value"}, &k, &v) || k != "k" || v != "v" {
		t.Fatalf("read %q %q", k, v)
	}
	for _, bad := range [][]byte{
		goMsgpack(t, map[string]string{"key": "k", "other": "v"}),
		AppendString(AppendString(AppendString(AppendString([]byte{0x82}, "key"), "a"), "key"), "b"),
		goMsgpack(t, map[string]int{"key": 1}),
	} {
		if StrFields(bad, []string{"key", "value"}, &k, &v) {
			t.Fatalf("read %x", bad)
		}
	}
}

// A codec lists its fields in name order and refuses a name given twice.
func TestNewOrdersAndChecksFields(t *testing.T) {
	var names []string
	for _, f := range sampleCodec.Fields() {
		names = append(names, f.Name())
	}
	want := []string{"at", "big", "config", "count", "exit", "extra", "head", "labels", "name", "note", "ok", "on", "parts", "seq", "sizes", "tags"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("fields %v, want %v", names, want)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a field named twice was taken")
		}
	}()
	New(Str("id", func(p *part) *string { return &p.ID }, Always), Str("id", func(p *part) *string { return &p.ID }, Always))
}
