package coordinator_test

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
)

// Finding 6 (file modes): a data dir that existed at 0755 left raft's
// snapshot state.bin at 0644. Every file the coordinator keeps is 0600 in
// 0700 directories, whatever modes were there before it started.
func TestDataDirModesArePrivate(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	body := []byte("an input only its submitter should read")
	sum := sha256.Sum256(body)
	if _, err := h.Client(t, h.AdminToken).PutArtifact(t.Context(), hex.EncodeToString(sum[:]), body); err != nil {
		t.Fatal(err)
	}
	if err := h.Server.Node().Snapshot(); err != nil {
		t.Fatal(err)
	}
	h.Stop()

	// Loosen everything, as a hand-made dir or a careless restore would,
	// and leave a stray file of the operator's.
	err := filepath.WalkDir(h.DataDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.Chmod(path, 0o755)
		}
		return os.Chmod(path, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.DataDir, "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(h.DataDir, "notes.txt"), 0o644); err != nil {
		t.Fatal(err)
	}

	h = coordinatortest.Restart(t, h)
	// A snapshot written by this run, after the tightening.
	mintClient(t, h, "after-restart", "read")
	if err := h.Server.Node().Snapshot(); err != nil {
		t.Fatal(err)
	}

	seen := map[string]bool{}
	err = filepath.WalkDir(h.DataDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if got := info.Mode().Perm(); got != want {
			t.Errorf("%s: mode %04o, want %04o", path, got, want)
		}
		seen[d.Name()] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"raft.db", "snapshots", "state.bin", "meta.json", "bootstrap-credentials.json", "artifacts", "notes.txt"} {
		if !seen[name] {
			t.Errorf("the data dir holds no %s: the walk checked less than it should", name)
		}
	}
}
