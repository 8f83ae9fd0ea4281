package client

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A snapshot upload sends what is left of its reader, and the same bytes
// again on each retry, whether it streams (a file, a bytes.Reader) or had
// to be read into memory (any other reader).
func TestSnapshotUploadRereadsTheRestOfItsReader(t *testing.T) {
	const content = "GPLSNAP\x03 the rest of a snapshot"
	path := filepath.Join(t.TempDir(), "snap")
	if err := os.WriteFile(path, []byte("skip"+content), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Seek(4, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	br := bytes.NewReader([]byte("xy" + content))
	if _, err := br.Read(make([]byte, 2)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		r    io.Reader
	}{
		{"a file at an offset", f},
		{"a bytes.Reader partly read", br},
		{"any other reader", io.MultiReader(strings.NewReader(content[:5]), strings.NewReader(content[5:]))},
	} {
		open, err := rereadable(c.r)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for try := range 2 {
			rc, n, err := open()
			if err != nil {
				t.Fatalf("%s, try %d: %v", c.name, try, err)
			}
			got, err := io.ReadAll(rc)
			rc.Close()
			if err != nil || string(got) != content || n != int64(len(content)) {
				t.Fatalf("%s, try %d: %q (%d bytes said, %v), want %q", c.name, try, got, n, err, content)
			}
		}
	}
}
