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
