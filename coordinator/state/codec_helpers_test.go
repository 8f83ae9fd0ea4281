package state

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"reflect"
	"slices"
	"testing"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/creds"
	"github.com/gpulayer/gpulayer/coordinator/state/mprecord"
)

// encodeV1 writes c as a version 1 (JSON) snapshot, the format before
// this codec: the same records, in the same order, as one document.
func encodeV1(t testing.TB, c *Capture) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := c.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	snap := decodeSnapshot(t, buf.Bytes())
	snap.Version = 1
	snap.inlineFinishes(t)
	b, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decodeSnapshot decodes a version 3 snapshot without loading it.
func decodeSnapshot(t testing.TB, b []byte) *snapshotV1 {
	t.Helper()
	snap, err := decodeRecords(bufio.NewReader(bytes.NewReader(b)))
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// inlineFinishes turns version 3's finish records into whole submission
// records, the only form versions 1 and 2 have.
func (snap *snapshotV1) inlineFinishes(t testing.TB) {
	t.Helper()
	for key, f := range snap.finishes {
		i := slices.IndexFunc(snap.Tasks, func(x *Task) bool { return x.ID == f.Task })
		if i < 0 {
			t.Fatalf("finish %s of a missing task", key)
		}
		snap.Submissions[key] = Submission{BodyHash: f.BodyHash, Task: snap.Tasks[i]}
	}
	snap.finishes = nil
}

// encodeV2 writes c as a version 2 snapshot, the records' format before
// finish records: every remembered finish carries its task whole.
func encodeV2(t testing.TB, c *Capture) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := c.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	v3 := buf.Bytes()
	snap := decodeSnapshot(t, v3)
	r := bufio.NewReader(bytes.NewReader(v3[len(snapshotMagic)+1:]))
	out := []byte(snapshotMagic + "\x02")
	for {
		kind, err := r.ReadByte()
		if err != nil {
			t.Fatal(err)
		}
		if kind == recEnd {
			return append(out, recEnd)
		}
		size, err := binary.ReadUvarint(r)
		if err != nil {
			t.Fatal(err)
		}
		body := make([]byte, size)
		if _, err := io.ReadFull(r, body); err != nil {
			t.Fatal(err)
		}
		if kind == recFinish {
			var f snapFinish
			if err := codec.NewDecoderBytes(body, msgpackHandle()).Decode(&f); err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(snap.Tasks, func(x *Task) bool { return x.ID == f.Task })
			if i < 0 {
				t.Fatalf("finish of task %s, which the snapshot lacks", f.Task)
			}
			body = body[:0]
			sub := snapSubmission{Key: submissionKey(f.Task, f.Submission), Submission: Submission{BodyHash: f.BodyHash, Task: snap.Tasks[i]}}
			if err := codec.NewEncoderBytes(&body, msgpackHandle()).Encode(sub); err != nil {
				t.Fatal(err)
			}
			kind = recSubmission
		}
		out = append(out, kind)
		out = binary.AppendUvarint(out, uint64(len(body)))
		out = append(out, body...)
	}
}

// withRecord returns a snapshot with one more record (kind,
// then v) before its end record.
func withRecord(t testing.TB, snap []byte, kind uint8, v any) []byte {
	t.Helper()
	var body []byte
	if err := codec.NewEncoderBytes(&body, msgpackHandle()).Encode(v); err != nil {
		t.Fatal(err)
	}
	return withRawRecord(t, snap, kind, uint64(len(body)), body)
}

// withRawRecord returns a snapshot with one more record, of the
// given kind, declared length and body, before its end record.
func withRawRecord(t testing.TB, snap []byte, kind uint8, size uint64, body []byte) []byte {
	t.Helper()
	if len(snap) == 0 || snap[len(snap)-1] != recEnd {
		t.Fatal("not a whole snapshot in records")
	}
	out := bytes.Clone(snap[:len(snap)-1])
	out = append(out, kind)
	out = binary.AppendUvarint(out, size)
	return append(append(out, body...), recEnd)
}

// The tests write and read records through these, as the snapshot does
// through putRecord and recordReader.read.
type testWriter struct{ w *mprecord.Writer }

func newTestWriter() testWriter { return testWriter{mprecord.NewWriter(msgpackHandle())} }

func (w testWriter) appendTask(b []byte, t *Task) ([]byte, error) {
	return taskCodec.Append(w.w, b, t)
}
func (w testWriter) appendJob(b []byte, j *Job) ([]byte, error) {
	return jobCodec.Append(w.w, b, j)
}
func (w testWriter) appendWorker(b []byte, x *Worker) ([]byte, error) {
	return workerCodec.Append(w.w, b, x)
}
func (w testWriter) appendCredential(b []byte, c *creds.Credential) ([]byte, error) {
	return credentialCodec.Append(w.w, b, c)
}
func (w testWriter) appendAudit(b []byte, ev *command.AuditEvent) []byte {
	b, _ = auditCodec.Append(w.w, b, ev)
	return b
}
func (d *recordReader) job(body []byte) (*Job, bool)       { return jobCodec.Decode(d.Reader, body) }
func (d *recordReader) worker(body []byte) (*Worker, bool) { return workerCodec.Decode(d.Reader, body) }
func (d *recordReader) credential(body []byte) (*creds.Credential, bool) {
	return credentialCodec.Decode(d.Reader, body)
}

// matchesTheCodec writes n records from gen through c and checks each:
// the bytes are those go-msgpack writes for the record with the
// snapshot's handle, so snapshots keep their format; the reader, sharing
// one interner across records as a restore does, reads from them what
// go-msgpack reads; and a record the reader leaves to go-msgpack is one
// nested says carries a value the writer hands to go-msgpack. It fails
// unless the reader read at least least of the records.
func matchesTheCodec[T any](t *testing.T, c *mprecord.Codec[T], n, least int, gen func() *T, nested func(*T) bool) {
	t.Helper()
	n, least = raceScaled(n), raceScaled(least)
	var want []byte
	enc := codec.NewEncoderBytes(&want, msgpackHandle())
	rw, d := mprecord.NewWriter(msgpackHandle()), newRecordReader()
	read := 0
	for i := range n {
		x := gen()
		want = want[:0]
		enc.ResetBytes(&want)
		if err := enc.Encode(x); err != nil {
			t.Fatal(err)
		}
		got, err := c.Append(rw, nil, x)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("record %d: %d bytes, the codec writes %d:\n got %x\nwant %x\nrecord %+v", i, len(got), len(want), got[:min(len(got), 300)], want[:min(len(want), 300)], x)
		}
		dec, ok := codecDecode[T](t, got)
		if !ok {
			t.Fatalf("record %d: go-msgpack cannot read the writer's bytes", i)
		}
		back, ok := c.Decode(d.Reader, got)
		switch {
		case !ok && !nested(x):
			t.Fatalf("record %d: the reader left a plain record to go-msgpack: %+v", i, x)
		case ok && !reflect.DeepEqual(back, dec):
			t.Fatalf("record %d: the reader read\n%+v\ngo-msgpack\n%+v", i, back, dec)
		case ok:
			read++
		}
	}
	if read < least {
		t.Fatalf("the reader read %d of %d records, fewer than %d: the comparison says little", read, n, least)
	}
}

// raceScaled is n, or a third of it under the race detector: make test's
// -race pass checks the codec on fewer random records (the same seeds'
// first ones), a plain go test on all of them.
func raceScaled(n int) int {
	if raceEnabled {
		return max(n/3, 1)
	}
	return n
}
