package command

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

func TestBatchFrameRoundTrip(t *testing.T) {
	var entries [][]byte
	for _, c := range []Command{
		SubmitJob{JobID: "j1", TaskIDs: []string{"j1-0"}, Spec: JobSpec{Executor: "exec"}, CreatedBy: "admin", Now: time.Unix(5, 0).UTC()},
		CancelJob{JobID: "j1", By: "admin"},
	} {
		e, err := Encode(c)
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, e)
	}
	framed, err := Encode(Batch{Entries: entries})
	if err != nil {
		t.Fatal(err)
	}
	if framed[0] != byte(TypeBatch) || framed[1] != batchFramed {
		t.Fatalf("framed batch opens with % x", framed[:2])
	}
	if bytes.Contains(framed, []byte(`"entries"`)) {
		t.Fatal("a framed batch still carries JSON")
	}
	got, err := Decode(framed)
	if err != nil {
		t.Fatal(err)
	}
	b := got.(Batch)
	if len(b.Entries) != len(entries) {
		t.Fatalf("%d entries back, want %d", len(b.Entries), len(entries))
	}
	for i := range entries {
		if !bytes.Equal(b.Entries[i], entries[i]) {
			t.Errorf("entry %d changed: %q", i, b.Entries[i])
		}
	}
	for i, d := range Unbatch(b) {
		if d.Err != nil {
			t.Errorf("entry %d: %v", i, d.Err)
		}
	}
}

// Entries written before framing (a batch as JSON) still decode.
func TestJSONBatchStillReads(t *testing.T) {
	inner, err := Encode(CancelJob{JobID: "j9", By: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(Batch{Entries: [][]byte{inner}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(append([]byte{byte(TypeBatch)}, body...))
	if err != nil {
		t.Fatal(err)
	}
	if b := got.(Batch); len(b.Entries) != 1 || !bytes.Equal(b.Entries[0], inner) {
		t.Fatalf("legacy batch read as %+v", b)
	}
}

func TestBadFramesAreRefused(t *testing.T) {
	frame := func(parts ...[]byte) []byte {
		return append([]byte{byte(TypeBatch)}, bytes.Join(parts, nil)...)
	}
	uv := func(n uint64) []byte { return binary.AppendUvarint(nil, n) }
	for name, entry := range map[string][]byte{
		"empty body":          {byte(TypeBatch)},
		"unknown framing":     frame([]byte{0x7f}),
		"no count":            frame([]byte{batchFramed}),
		"count past the body": frame([]byte{batchFramed}, uv(1<<40)),
		"entry overruns":      frame([]byte{batchFramed}, uv(1), uv(10), []byte("abc")),
		"bytes after entries": frame([]byte{batchFramed}, uv(1), uv(1), []byte("a"), []byte("zz")),
		"fewer than counted":  frame([]byte{batchFramed}, uv(3), uv(1), []byte("a")),
		"length overflows":    frame([]byte{batchFramed}, uv(1), uv(1<<63), []byte("a")),
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Decode(entry); err == nil {
				t.Fatalf("% x decoded", entry)
			} else if name != "empty body" && !errors.Is(err, ErrBadFrame) {
				t.Fatalf("error %v, want ErrBadFrame", err)
			}
		})
	}
}
