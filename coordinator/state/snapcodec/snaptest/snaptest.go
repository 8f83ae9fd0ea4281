// Package snaptest writes snapshots a coordinator no longer writes, and
// damaged ones, for the tests of the code that reads them: the older
// formats (version 1, one JSON document; version 2, records without the
// finish record), and a snapshot with one more record of any kind,
// well formed or not.
package snaptest

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"slices"
	"testing"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/gpulayer/gpulayer/coordinator/state/record"
	"github.com/gpulayer/gpulayer/coordinator/state/snapcodec"
)

// Decode decodes a snapshot without loading it.
func Decode(t testing.TB, b []byte) *snapcodec.Image {
	t.Helper()
	snap, err := snapcodec.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// V1 rewrites a current snapshot as a version 1 (JSON) one, the format
// before records: the same records, in the same order, as one document.
func V1(t testing.TB, current []byte) []byte {
	t.Helper()
	snap := Decode(t, current)
	snap.Version = 1
	inlineFinishes(t, snap)
	b, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// inlineFinishes turns version 3's finish records into whole submission
// records, the only form versions 1 and 2 have.
func inlineFinishes(t testing.TB, snap *snapcodec.Image) {
	t.Helper()
	for key, f := range snap.Finishes {
		snap.Submissions[key] = record.Submission{BodyHash: f.BodyHash, Task: taskOf(t, snap, f.Task)}
	}
	snap.Finishes = nil
}

func taskOf(t testing.TB, snap *snapcodec.Image, id string) *record.Task {
	t.Helper()
	i := slices.IndexFunc(snap.Tasks, func(x *record.Task) bool { return x.ID == id })
	if i < 0 {
		t.Fatalf("finish of task %s, which the snapshot lacks", id)
	}
	return snap.Tasks[i]
}

// V2 rewrites a current snapshot as a version 2 one, the records' format
// before finish records: every remembered finish carries its task whole.
func V2(t testing.TB, current []byte) []byte {
	t.Helper()
	snap := Decode(t, current)
	r := bufio.NewReader(bytes.NewReader(current[len(snapcodec.Magic)+1:]))
	out := []byte(snapcodec.Magic + "\x02")
	for {
		kind, err := r.ReadByte()
		if err != nil {
			t.Fatal(err)
		}
		if kind == snapcodec.RecEnd {
			return append(out, snapcodec.RecEnd)
		}
		size, err := binary.ReadUvarint(r)
		if err != nil {
			t.Fatal(err)
		}
		body := make([]byte, size)
		if _, err := io.ReadFull(r, body); err != nil {
			t.Fatal(err)
		}
		if kind == snapcodec.RecFinish {
			var f snapcodec.Finish
			if err := codec.NewDecoderBytes(body, snapcodec.Handle()).Decode(&f); err != nil {
				t.Fatal(err)
			}
			body = body[:0]
			sub := snapcodec.SubmissionRecord{Key: f.Task + "/" + f.Submission, Submission: record.Submission{BodyHash: f.BodyHash, Task: taskOf(t, snap, f.Task)}}
			if err := codec.NewEncoderBytes(&body, snapcodec.Handle()).Encode(sub); err != nil {
				t.Fatal(err)
			}
			kind = snapcodec.RecSubmission
		}
		out = append(out, kind)
		out = binary.AppendUvarint(out, uint64(len(body)))
		out = append(out, body...)
	}
}

// WithRecord returns a snapshot with one more record (kind, then v as
// go-msgpack writes it) before its end record.
func WithRecord(t testing.TB, snap []byte, kind uint8, v any) []byte {
	t.Helper()
	var body []byte
	if err := codec.NewEncoderBytes(&body, snapcodec.Handle()).Encode(v); err != nil {
		t.Fatal(err)
	}
	return WithRawRecord(t, snap, kind, uint64(len(body)), body)
}

// WithRawRecord returns a snapshot with one more record, of the given
// kind, declared length and body, before its end record.
func WithRawRecord(t testing.TB, snap []byte, kind uint8, size uint64, body []byte) []byte {
	t.Helper()
	if len(snap) == 0 || snap[len(snap)-1] != snapcodec.RecEnd {
		t.Fatal("not a whole snapshot in records")
	}
	out := bytes.Clone(snap[:len(snap)-1])
	out = append(out, kind)
	out = binary.AppendUvarint(out, size)
	return append(append(out, body...), snapcodec.RecEnd)
}
