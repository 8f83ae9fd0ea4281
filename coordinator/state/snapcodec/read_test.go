package snapcodec

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/mprecord"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// codecDecode decodes body as decodeRecords did before the record reader:
// go-msgpack into a fresh record, with nothing left after the value.
// MessagePack markers the tests below build records from (the writer's
// own are mprecord's).
const (
	mpNil, mpFalse, mpTrue, mpBin8, mpStr8, mpStr32 = 0xc0, 0xc2, 0xc3, 0xc4, 0xd9, 0xdb
	mpInt8, mpUint8, mpFixExt4, mpFixExt8, mpExt8   = 0xd0, 0xcc, 0xd6, 0xd7, 0xc7
	mpArray16, mpArray32, mpMap16, mpMap32          = 0xdc, 0xdd, 0xde, 0xdf
)

func codecDecode[T any](t *testing.T, body []byte) (*T, bool) {
	t.Helper()
	dec := codec.NewDecoderBytes(body, Handle())
	var v *T
	if err := dec.Decode(&v); err != nil || dec.NumBytesRead() != len(body) {
		return nil, false
	}
	return v, true
}

// hasNested reports whether a task carries a value the writer hands to
// go-msgpack (which the reader leaves to go-msgpack in turn).
func taskHasNested(x *record.Task) bool {
	if len(x.Artifacts) > 0 {
		return true
	}
	for _, a := range x.Attempts {
		if a.Rendezvous != nil || a.PreemptedBy != nil {
			return true
		}
	}
	return false
}

// Finish and string-table records read back as they were written.
func TestSmallRecordsReadBack(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for i := range 500 {
		str := func() string { return string(bytes.Repeat([]byte{'q'}, rng.IntN(300))) }
		f := Finish{Task: str(), Submission: str(), BodyHash: str()}
		if got, ok := newRecordReader().finish(appendFinish(nil, f)); !ok || got != f {
			t.Fatalf("finish %d: got %+v (%v), want %+v", i, got, ok, f)
		}
		p := Pair{Key: str(), Value: str()}
		if got, ok := newRecordReader().pair(appendPair(nil, p)); !ok || got != p {
			t.Fatalf("pair %d: got %+v (%v), want %+v", i, got, ok, p)
		}
	}
}

// On damaged bytes the reader either gives up, leaving the record to
// go-msgpack, or reads exactly what go-msgpack reads: it never accepts a
// record go-msgpack refuses, nor reads one differently.
func TestRecordReaderNeverDisagreesOnDamagedRecords(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	rw := newTestWriter()
	taken := 0
	records := raceScaled(6000)
	for i := range records {
		var body []byte
		switch i % 5 {
		case 0:
			body, _ = rw.appendTask(nil, randomTask(rng))
		case 1:
			body, _ = rw.appendJob(nil, randomJob(rng))
		case 2:
			body, _ = rw.appendWorker(nil, randomWorker(rng))
		case 3:
			x := randomTask(rng)
			body = rw.appendAudit(nil, &command.AuditEvent{Seq: x.Seq, Time: x.CreatedAt, Kind: x.State, Actor: x.JobID, Count: x.Index})
		default:
			body, _ = rw.appendCredential(nil, randomCredential(rng))
		}
		if readerAgrees(t, damage(rng, body)) {
			taken++
		}
	}
	t.Logf("%d damaged records (of %d) read by the reader, each as go-msgpack reads it", taken, records)
	if taken < records/10 {
		t.Fatalf("the reader took only %d damaged records: the comparison says little", taken)
	}
}

// readerAgrees checks that what the reader takes of body, read as each
// kind of record, go-msgpack reads the same; it reports whether the
// reader took it as any.
func readerAgrees(t *testing.T, body []byte) bool {
	t.Helper()
	d := newRecordReader()
	taken := agrees(t, "task", body, d.task)
	taken = agrees(t, "job", body, d.job) || taken
	taken = agrees(t, "worker", body, d.worker) || taken
	taken = agrees(t, "audit event", body, func(b []byte) (*command.AuditEvent, bool) {
		ev, ok := d.audit(b)
		return &ev, ok
	}) || taken
	taken = agrees(t, "finish", body, func(b []byte) (*Finish, bool) {
		f, ok := d.finish(b)
		return &f, ok
	}) || taken
	taken = agrees(t, "pair", body, func(b []byte) (*Pair, bool) {
		p, ok := d.pair(b)
		return &p, ok
	}) || taken
	return agrees(t, "credential", body, d.credential) || taken
}

// agrees checks one kind of record: read by the reader, if it takes
// body, as go-msgpack reads it.
func agrees[T any](t *testing.T, kind string, body []byte, read func([]byte) (*T, bool)) bool {
	t.Helper()
	got, ok := read(body)
	if !ok {
		return false
	}
	want, cok := codecDecode[T](t, body)
	if !cok || !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: reader %+v, go-msgpack %+v (%v)\n%x", kind, got, want, cok, body)
	}
	return true
}

// damage changes body in one of a few ways: a byte flipped, a byte set
// to a marker, cut short, a byte dropped, or bytes appended.
func damage(rng *rand.Rand, body []byte) []byte {
	b := append([]byte(nil), body...)
	if len(b) == 0 {
		return b
	}
	i := rng.IntN(len(b))
	switch rng.IntN(5) {
	case 0:
		b[i] ^= 1 << rng.IntN(8)
	case 1:
		markers := []byte{mpNil, mpFalse, mpTrue, mpBin8, mpStr8, mpInt8, mpUint8, mpFixExt4, mpFixExt8, mpExt8, mpArray16, mpMap16, 0x00, 0x7f, 0xff}
		b[i] = markers[rng.IntN(len(markers))]
	case 2:
		b = b[:i]
	case 3:
		b = append(b[:i], b[i+1:]...)
	default:
		b = append(b, byte(rng.IntN(256)))
	}
	return b
}

// FuzzRecordReader: whatever the bytes, the reader does not panic, and
// what it reads, as any kind of record, go-msgpack reads the same.
func FuzzRecordReader(f *testing.F) {
	rng := rand.New(rand.NewPCG(15, 16))
	rw := newTestWriter()
	for range 8 {
		b, _ := rw.appendTask(nil, randomTask(rng))
		f.Add(b)
		b, _ = rw.appendJob(nil, randomJob(rng))
		f.Add(b)
		b, _ = rw.appendWorker(nil, randomWorker(rng))
		f.Add(b)
		b, _ = rw.appendCredential(nil, randomCredential(rng))
		f.Add(b)
		x := randomTask(rng)
		f.Add(rw.appendAudit(nil, &command.AuditEvent{Seq: x.Seq, Time: x.CreatedAt, Kind: x.State, Count: x.Index}))
		f.Add(appendFinish(nil, Finish{Task: x.ID, Submission: x.JobID, BodyHash: x.State}))
		f.Add(appendPair(nil, Pair{Key: x.ID, Value: x.JobID}))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		readerAgrees(t, body)
	})
}

// A length a record claims reserves no more ahead than go-msgpack would
// (maxInitLen elements): a 1 MiB record claiming a million devices,
// attempts, strings or map entries, each a byte that is no value, costs
// the reader well under the 240 MB its claim would have reserved.
func TestRecordReaderReservesNoMoreThanSent(t *testing.T) {
	const n = 1 << 20
	claim := func(field string, array bool) []byte {
		b := mprecord.AppendString([]byte{0x81}, field)
		if array {
			b = append(b, mpArray32)
		} else {
			b = append(b, mpMap32)
		}
		b = binary.BigEndian.AppendUint32(b, n)
		return append(b, bytes.Repeat([]byte{0xc1}, n)...) // 0xc1: never used
	}
	d := newRecordReader()
	worker := func(b []byte) bool { _, ok := d.worker(b); return ok }
	task := func(b []byte) bool { _, ok := d.task(b); return ok }
	for _, c := range []struct {
		name string
		body []byte
		read func([]byte) bool
	}{
		{"worker devices", claim("devices", true), worker},
		{"worker approved devices", claim("approved_devices", false), worker},
		{"task attempts", claim("attempts", true), task},
		{"task devices", claim("devices", true), task},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		ok := c.read(c.body)
		runtime.ReadMemStats(&after)
		if ok {
			t.Fatalf("%s: a record of undecodable bytes was read", c.name)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
			t.Errorf("%s: the reader allocated %d bytes for a claim it could not read", c.name, got)
		}
	}
}

// A 32-bit length of 2^31 or more is refused, not read as negative where
// int is 32 bits (where it skipped a map's fields, or panicked in make).
func TestRecordReaderRefusesHugeLengths(t *testing.T) {
	for _, body := range [][]byte{
		{mpMap32, 0xff, 0xff, 0xff, 0xff},
		append(mprecord.AppendString([]byte{0x81}, "spec"), mpMap32, 0x80, 0, 0, 0),
		append(mprecord.AppendString([]byte{0x81}, "devices"), mpArray32, 0xff, 0xff, 0xff, 0xff),
		append(mprecord.AppendString([]byte{0x81}, "id"), mpStr32, 0x80, 0, 0, 0),
	} {
		d := newRecordReader()
		if _, ok := d.task(body); ok {
			t.Errorf("task %x read", body)
		}
		if _, ok := d.job(body); ok {
			t.Errorf("job %x read", body)
		}
		if _, ok := d.worker(body); ok {
			t.Errorf("worker %x read", body)
		}
	}
}
