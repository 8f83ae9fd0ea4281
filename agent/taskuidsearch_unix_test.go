//go:build unix

package agent

import (
	"errors"
	"log/slog"
	"os/user"
	"path/filepath"
	"testing"
)

// An agent told to search passes over a range another agent holds, or one
// holding a uid of the host, and records the range it took; one not told
// to fails as before.
func TestTaskUIDSearch(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "locks")
	held, err := claimTaskUIDs(dir, 70000, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer held()
	nobody := uint32(0)
	if u, err := user.LookupId("65534"); err == nil && u != nil {
		nobody = 65534
	}
	type tc struct {
		name     string
		base     uint32
		search   bool
		wantBase uint32
		wantErr  error
	}
	cases := []tc{
		{"held, no search", 70000, false, 0, ErrTaskUIDsTaken},
		{"held, search", 70000, true, 70004, nil},
		{"overlapping the held range, search", 69998, true, 70006, nil},
		{"free", 70100, false, 70100, nil},
	}
	if nobody != 0 {
		cases = append(cases,
			tc{"a host user in it, no search", nobody - 1, false, 0, ErrTaskUIDsInUse},
			tc{"a host user in it, search", nobody - 1, true, nobody + 3, nil})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := &Agent{cfg: Config{TaskUIDLockDir: dir, TaskUIDSearch: c.search}, log: slog.New(slog.DiscardHandler), plan: taskPlan{base: c.base}, slots: 4}
			users, release, err := a.taskUsers(4)
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) || a.plan.base != c.base {
					t.Fatalf("err %v, base %d: want %v and the base unchanged", err, a.plan.base, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer release()
			if users == nil || a.plan.base != c.wantBase {
				t.Fatalf("took base %d, want %d", a.plan.base, c.wantBase)
			}
			if lo, hi, ok := a.taskUIDRange(); !ok || lo != c.wantBase || hi != c.wantBase+3 {
				t.Fatalf("range %d … %d (%v)", lo, hi, ok)
			}
			// The range taken is claimed: a second agent cannot have it.
			if _, err := claimTaskUIDs(dir, c.wantBase, 4); !errors.Is(err, ErrTaskUIDsTaken) {
				t.Fatalf("the range taken is not claimed: %v", err)
			}
		})
	}
}
