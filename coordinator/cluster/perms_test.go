package cluster

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// RestrictTree restricts the directory a symbolic link names when the
// link is the root (a data dir on a mounted volume), and leaves links
// below the root alone.
func TestRestrictTreeFollowsARootLinkOnly(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "volume")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{real, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(real, "raft.db"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "other"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(real, "link")); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(base, "data")
	if err := os.Symlink(real, data); err != nil {
		t.Fatal(err)
	}

	changed, err := RestrictTree(data)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{real, filepath.Join(real, "raft.db")}
	if !slices.Equal(changed, want) {
		t.Fatalf("changed %v, want %v", changed, want)
	}
	for path, mode := range map[string]os.FileMode{real: 0o700, filepath.Join(real, "raft.db"): 0o600, outside: 0o755, filepath.Join(outside, "other"): 0o644} {
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Mode().Perm(); got != mode {
			t.Errorf("%s: mode %o, want %o", path, got, mode)
		}
	}
	if changed, err := RestrictTree(filepath.Join(base, "missing")); err != nil || changed != nil {
		t.Fatalf("a missing dir: %v %v", changed, err)
	}
}
