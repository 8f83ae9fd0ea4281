package countw

import (
	"bytes"
	"errors"
	"testing"
)

type failAfter struct{ left int }

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.left {
		n := f.left
		f.left = 0
		return n, errors.New("full")
	}
	f.left -= len(p)
	return len(p), nil
}

// Writer counts what reached the writer below, a short write included.
func TestWriterCounts(t *testing.T) {
	var b bytes.Buffer
	w := &Writer{W: &b}
	for _, s := range []string{"abc", "", "defg"} {
		if _, err := w.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	if w.N != 7 || b.String() != "abcdefg" {
		t.Fatalf("counted %d, wrote %q", w.N, b.String())
	}
	short := &Writer{W: &failAfter{left: 2}}
	if _, err := short.Write([]byte("xyz")); err == nil || short.N != 2 {
		t.Fatalf("short write: counted %d, err %v", short.N, err)
	}
}
