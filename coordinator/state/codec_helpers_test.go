package state

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"testing"

	"github.com/hashicorp/go-msgpack/v2/codec"
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
	b, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decodeSnapshot decodes a version 2 snapshot without loading it.
func decodeSnapshot(t testing.TB, b []byte) *snapshotV1 {
	t.Helper()
	snap, err := decodeV2(bufio.NewReader(bytes.NewReader(b)))
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// withRecord returns a version 2 snapshot with one more record (kind,
// then v) before its end record.
func withRecord(t testing.TB, snap []byte, kind uint8, v any) []byte {
	t.Helper()
	var body []byte
	if err := codec.NewEncoderBytes(&body, msgpackHandle()).Encode(v); err != nil {
		t.Fatal(err)
	}
	return withRawRecord(t, snap, kind, uint64(len(body)), body)
}

// withRawRecord returns a version 2 snapshot with one more record, of the
// given kind, declared length and body, before its end record.
func withRawRecord(t testing.TB, snap []byte, kind uint8, size uint64, body []byte) []byte {
	t.Helper()
	if len(snap) == 0 || snap[len(snap)-1] != recEnd {
		t.Fatal("not a whole version 2 snapshot")
	}
	out := bytes.Clone(snap[:len(snap)-1])
	out = append(out, kind)
	out = binary.AppendUvarint(out, size)
	return append(append(out, body...), recEnd)
}
