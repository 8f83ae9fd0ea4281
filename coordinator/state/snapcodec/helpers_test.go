package snapcodec

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/creds"
	"github.com/gpulayer/gpulayer/coordinator/state/mprecord"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// The tests write and read records through these, as the snapshot does
// through putRecord and recordReader.read.
type testWriter struct{ w *mprecord.Writer }

func newTestWriter() testWriter { return testWriter{mprecord.NewWriter(Handle())} }

func (w testWriter) appendTask(b []byte, t *record.Task) ([]byte, error) {
	return taskCodec.Append(w.w, b, t)
}
func (w testWriter) appendJob(b []byte, j *record.Job) ([]byte, error) {
	return jobCodec.Append(w.w, b, j)
}
func (w testWriter) appendWorker(b []byte, x *record.Worker) ([]byte, error) {
	return workerCodec.Append(w.w, b, x)
}
func (w testWriter) appendCredential(b []byte, c *creds.Credential) ([]byte, error) {
	return credentialCodec.Append(w.w, b, c)
}
func (w testWriter) appendAudit(b []byte, ev *command.AuditEvent) []byte {
	b, _ = auditCodec.Append(w.w, b, ev)
	return b
}
func (d *recordReader) job(body []byte) (*record.Job, bool) { return jobCodec.Decode(d.Reader, body) }
func (d *recordReader) worker(body []byte) (*record.Worker, bool) {
	return workerCodec.Decode(d.Reader, body)
}
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
	enc := codec.NewEncoderBytes(&want, Handle())
	rw, d := mprecord.NewWriter(Handle()), newRecordReader()
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
