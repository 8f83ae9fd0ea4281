package blob

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Stat and Verify tell a blob that is there and intact from one that is
// missing or whose bytes changed on disk; a store whose directory was
// wiped under it takes blobs again.
func TestVerifyAndAWipedStore(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	body := []byte("checkpoint")
	d := digestOf(body)
	if _, err := s.Put(d, bytes.NewReader(body)); err != nil {
		t.Fatal(err)
	}
	if size, mod, err := s.Stat(d); err != nil || size != int64(len(body)) || mod.IsZero() {
		t.Fatalf("stat: %d %v %v", size, mod, err)
	}
	if n, err := s.Verify(d); err != nil || n != int64(len(body)) {
		t.Fatalf("verify an intact blob: %d %v", n, err)
	}
	// A byte changes on disk, the size staying the same.
	if err := os.WriteFile(filepath.Join(dir, d[:2], d), []byte("checkpoinT"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Verify(d); !errors.Is(err, ErrDigestMismatch) {
		t.Fatalf("verify a changed blob: %v, want ErrDigestMismatch", err)
	}
	other := digestOf([]byte("never stored"))
	if _, _, err := s.Stat(other); !errors.Is(err, ErrNotFound) {
		t.Fatalf("stat a missing blob: %v", err)
	}
	if _, err := s.Verify(other); !errors.Is(err, ErrNotFound) {
		t.Fatalf("verify a missing blob: %v", err)
	}
	if _, _, err := s.Stat("nope"); !errors.Is(err, ErrInvalidDigest) {
		t.Fatalf("stat a bad name: %v", err)
	}

	// The whole directory goes while the store is open.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Stat(d); !errors.Is(err, ErrNotFound) {
		t.Fatalf("stat after the wipe: %v", err)
	}
	if _, err := s.Put(d, bytes.NewReader(body)); err != nil {
		t.Fatalf("put after the wipe: %v", err)
	}
	if _, err := s.Verify(d); err != nil {
		t.Fatalf("verify after the wipe: %v", err)
	}
	if info, err := os.Stat(filepath.Join(dir, "tmp")); err != nil || info.Mode().Perm() != 0o700 {
		t.Fatalf("tmp/ made again: %v %v", info, err)
	}
}
