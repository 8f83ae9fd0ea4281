package exec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/sdk/executor"
)

// A sweep for an owner removes only that owner's empty cgroups: another
// agent's on the same host (made, its task not in it yet) survives, and
// so do the cgroups of executors that name no owner. A sweep for no
// owner takes only cgroups that name none.
func TestSweepOnlyItsOwnersCgroups(t *testing.T) {
	names := []string{"agent-mine.attempt-1", "agent-mine.attempt-2", "agent-other.attempt-3", "attempt-4", "agent-mine-2.attempt-5"}
	for _, tc := range []struct {
		owner string
		want  []string
	}{
		{"agent-mine", []string{"agent-mine.attempt-1", "agent-mine.attempt-2"}},
		{"agent-other", []string{"agent-other.attempt-3"}},
		{"", []string{"attempt-4"}},
		{"agent-none", nil},
	} {
		t.Run("owner "+tc.owner, func(t *testing.T) {
			parent := t.TempDir()
			for _, n := range names {
				if err := os.Mkdir(filepath.Join(parent, n), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			removed, err := sweepCgroupDir(parent, &cgroupSet{dirs: make(map[string]int)}, tc.owner)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, n := range tc.want {
				want = append(want, filepath.Join(parent, n))
			}
			if !slices.Equal(removed, want) {
				t.Errorf("removed %q, want %q", removed, want)
			}
			for _, n := range names {
				_, err := os.Stat(filepath.Join(parent, n))
				if gone := errors.Is(err, os.ErrNotExist); gone != slices.Contains(tc.want, n) {
					t.Errorf("%s: gone %v (%v)", n, gone, err)
				}
			}
		})
	}
}

func TestOwnedName(t *testing.T) {
	for _, tc := range []struct{ owner, id, want string }{
		{"", "attempt-1", "attempt-1"},
		{"agent-ab12", "attempt-1", "agent-ab12.attempt-1"},
	} {
		if got := ownedName(tc.owner, tc.id); got != tc.want || !ownedBy(got, tc.owner) {
			t.Errorf("ownedName(%q, %q) = %q (owned %v), want %q", tc.owner, tc.id, got, ownedBy(got, tc.owner), tc.want)
		}
	}
}

// On a real host: an executor whose first task belongs to one agent
// sweeps that agent's empty leftover cgroup and leaves another agent's
// empty cgroup, in the same parent, where it is.
func TestExecutorSweepsOnlyItsAgentsCgroups(t *testing.T) {
	cgroupsOnly(t)
	mine, other := fmt.Sprintf("agent-mine%d", os.Getpid()), fmt.Sprintf("agent-other%d", os.Getpid())
	var stale, others []string
	for i, parent := range cgroupParents() {
		if err := os.MkdirAll(parent, 0o755); err != nil {
			t.Fatal(err)
		}
		s := filepath.Join(parent, ownedName(mine, fmt.Sprintf("attempt-stale-%d", i)))
		o := filepath.Join(parent, ownedName(other, fmt.Sprintf("attempt-made-%d", i)))
		for _, d := range []string{s, o} {
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() {
			for _, d := range []string{s, o} {
				if err := removeCgroupDir(d, false); err != nil {
					t.Error(err)
				}
			}
		})
		stale, others = append(stale, s), append(others, o)
	}

	logs := runTrueTask(t, &executor.Sandbox{Owner: mine})
	for _, d := range stale {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("this agent's stale cgroup %s is left: %v", d, err)
		}
	}
	for _, d := range others {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("another agent's empty cgroup %s went: %v", d, err)
		}
		if strings.Contains(logs.String(), "cgroup="+d+"\n") {
			t.Errorf("the sweep removed another agent's cgroup %s", d)
		}
	}
}
