//go:build unix

package agent

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Two agents on one host never hold one task uid: a range that overlaps
// a claimed one is refused, a disjoint one is not, and a released range
// can be claimed again. Before, two agents with the default range killed
// each other's tasks whenever a task of one ended (a flake of the HA tests,
// whose in-process agents shared 61000 …).
func TestTaskUIDClaims(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "locks")
	first, err := claimTaskUIDs(dir, 70000, 4)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("lock dir: %v %v, want mode 0700", fi.Mode().Perm(), err)
	}
	cases := []struct {
		name    string
		base    uint32
		n       int
		refused bool
	}{
		{"the same range", 70000, 4, true},
		{"overlapping at its end", 70003, 4, true},
		{"overlapping at its start", 69998, 3, true},
		{"disjoint", 70004, 4, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			release, err := claimTaskUIDs(dir, c.base, c.n)
			if c.refused != errors.Is(err, ErrTaskUIDsTaken) || (!c.refused && err != nil) {
				t.Fatalf("claim %d+%d = %v, refused want %v", c.base, c.n, err, c.refused)
			}
			if err == nil {
				release()
			}
		})
	}
	first()
	again, err := claimTaskUIDs(dir, 70000, 4)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	again()
}
