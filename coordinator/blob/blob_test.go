package blob

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func digestOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestPutKeepsOnlyMatchingContent(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	body := []byte("model weights")
	d := digestOf(body)
	if n, err := s.Put(d, bytes.NewReader(body)); err != nil || n != int64(len(body)) {
		t.Fatalf("put: %d %v", n, err)
	}
	f, size, err := s.Open(d)
	if err != nil || size != int64(len(body)) {
		t.Fatalf("open: %d %v", size, err)
	}
	got, _ := io.ReadAll(f)
	f.Close()
	if !bytes.Equal(got, body) {
		t.Fatalf("read %q", got)
	}

	other := digestOf([]byte("something else"))
	if _, err := s.Put(other, bytes.NewReader(body)); !errors.Is(err, ErrDigestMismatch) {
		t.Fatalf("mismatched put: %v", err)
	}
	if s.Has(other) {
		t.Fatal("a mismatched upload was stored")
	}
	left, _ := os.ReadDir(filepath.Join(dir, "tmp"))
	if len(left) != 0 {
		t.Fatalf("temporary files left behind: %v", left)
	}
	for _, bad := range []string{"", "abc", strings.Repeat("A", 64), strings.Repeat("g", 64), "../" + strings.Repeat("a", 61)} {
		if _, err := s.Put(bad, bytes.NewReader(body)); !errors.Is(err, ErrInvalidDigest) {
			t.Errorf("put %q: %v", bad, err)
		}
	}
	if _, _, err := s.Open(other); !errors.Is(err, ErrNotFound) {
		t.Fatalf("open missing: %v", err)
	}
}

// failingReader returns some bytes, then err.
type failingReader struct {
	left int
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if f.left == 0 {
		return 0, f.err
	}
	n := min(len(p), f.left)
	f.left -= n
	return n, nil
}

// The sender's failures come back as they are; a failure of the node's
// own disk wraps ErrStorage. Neither stores anything.
func TestPutTellsTheSendersFailuresFromTheDisks(t *testing.T) {
	dropped := errors.New("connection reset by peer")
	cases := []struct {
		name        string
		body        io.Reader
		breakDisk   bool
		wantStorage bool
		want        error
	}{
		{"the sender's connection drops", &failingReader{left: 100, err: dropped}, false, false, dropped},
		{"the disk refuses the write", bytes.NewReader([]byte("weights")), true, true, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			if c.breakDisk {
				// Where the temporary file would go is now a file, so the
				// disk cannot take the upload (as when it is full).
				if err := os.RemoveAll(filepath.Join(dir, "tmp")); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "tmp"), nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			d := digestOf([]byte("weights"))
			_, err = s.Put(d, c.body)
			if got := errors.Is(err, ErrStorage); got != c.wantStorage {
				t.Fatalf("Put = %v: wraps ErrStorage %v, want %v", err, got, c.wantStorage)
			}
			if c.want != nil && !errors.Is(err, c.want) {
				t.Fatalf("Put = %v, want %v", err, c.want)
			}
			if s.Has(d) {
				t.Fatal("a failed upload was stored")
			}
		})
	}
}

// Spool holds an upload in a nameless file: it reads back whole from its
// start, leaves nothing in tmp/, and a sender's failure comes back as it
// is, not as the disk's.
func TestSpool(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("snapshot "), 100_000)
	f, n, err := s.Spool(bytes.NewReader(body))
	if err != nil || n != int64(len(body)) {
		t.Fatalf("spool: %d %v", n, err)
	}
	defer f.Close()
	if left, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(left) != 0 {
		t.Fatalf("tmp/ holds %v while the spool is open", left)
	}
	back, err := io.ReadAll(f)
	if err != nil || !bytes.Equal(back, body) {
		t.Fatalf("read back %d bytes (%v), want %d", len(back), err, len(body))
	}
	dropped := errors.New("connection reset by peer")
	if _, _, err := s.Spool(&failingReader{left: 100, err: dropped}); !errors.Is(err, dropped) || errors.Is(err, ErrStorage) {
		t.Fatalf("a dropped upload: %v", err)
	}
}
