package exec

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/internal/syncbuf"
	"github.com/gpulayer/gpulayer/sdk/executor"
	"github.com/gpulayer/gpulayer/sdk/executor/executortest"
)

// A sweep removes the empty directories in a parent that no live task
// owns, and nothing else: rmdir refuses one with something in it (a
// cgroup with a process or a child cgroup in it), and it is all a sweep
// does.
func TestSweepCgroupDir(t *testing.T) {
	parent := t.TempDir()
	live := &cgroupSet{dirs: make(map[string]int)}
	entries := []struct {
		name, kind string
		wantGone   bool
	}{
		{"attempt-stale", "empty", true},
		{"attempt-stale-2", "empty", true},
		{"attempt-live", "live", false},
		{"attempt-in-use", "in use", false},
		{"notes", "file", false},
	}
	for _, en := range entries {
		path := filepath.Join(parent, en.name)
		var err error
		switch en.kind {
		case "empty":
			err = os.Mkdir(path, 0o755)
		case "live":
			err = os.Mkdir(path, 0o755)
			live.add([]string{path})
		case "in use":
			if err = os.Mkdir(path, 0o755); err == nil {
				err = os.WriteFile(filepath.Join(path, "cgroup.procs"), []byte("1\n"), 0o644)
			}
		case "file":
			err = os.WriteFile(path, nil, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	removed, err := sweepCgroupDir(parent, live, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(parent, "attempt-stale"), filepath.Join(parent, "attempt-stale-2")}; !slices.Equal(removed, want) {
		t.Errorf("removed %q, want %q", removed, want)
	}
	for _, en := range entries {
		_, err := os.Stat(filepath.Join(parent, en.name))
		if gone := errors.Is(err, os.ErrNotExist); gone != en.wantGone {
			t.Errorf("%s (%s): gone %v, want %v (%v)", en.name, en.kind, gone, en.wantGone, err)
		}
	}
	if removed, err := sweepCgroupDir(filepath.Join(parent, "missing"), live, ""); removed != nil || err != nil {
		t.Errorf("a parent that is not there: %q, %v; want nothing", removed, err)
	}
}

// cgroupsOnly skips a test of the task cgroups where the executor cannot
// make them.
func cgroupsOnly(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("task cgroups need root; CI runs this as root")
	}
	if why := sandboxRefused(); why != "" {
		t.Skip(why)
	}
	if len(cgroupParents()) == 0 {
		t.Skip("no cgroup hierarchy to make task cgroups in")
	}
}

// startSleep starts a process that stays until the test ends.
func startSleep(t *testing.T) *osexec.Cmd {
	t.Helper()
	cmd := osexec.Command("sleep", "1000")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

// The leftovers of a plugin killed with SIGKILL: empty task cgroups under
// the executor's gpulayer parents. An executor sweeps them before it
// makes its first task's cgroup; a cgroup with a process in it stays, and
// so does the process (the sweep kills nothing), and so does the cgroup
// of another task of this process that has none yet.
func TestExecutorSweepsStaleCgroups(t *testing.T) {
	cgroupsOnly(t)
	sleep := startSleep(t)
	pid := fmt.Sprint(sleep.Process.Pid)
	var stale, inUse []string
	for i, parent := range cgroupParents() {
		if err := os.MkdirAll(parent, 0o755); err != nil {
			t.Fatal(err)
		}
		s := filepath.Join(parent, fmt.Sprintf("attempt-stale-%d-%d", os.Getpid(), i))
		u := filepath.Join(parent, fmt.Sprintf("attempt-in-use-%d-%d", os.Getpid(), i))
		for _, d := range []string{s, u} {
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() {
			_ = sleep.Process.Kill()
			_ = sleep.Wait()
			for _, d := range []string{s, u} {
				if err := removeCgroupDir(d, false); err != nil {
					t.Error(err)
				}
			}
		})
		if err := writeFile(filepath.Join(u, "cgroup.procs"), pid); err != nil {
			t.Fatal(err)
		}
		stale, inUse = append(stale, s), append(inUse, u)
	}
	// Another task of this process, whose init is not in its cgroup yet.
	live, err := newTaskCgroup(fmt.Sprintf("attempt-live-%d", os.Getpid()), cgroupLimits{Pids: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := live.remove(); err != nil {
			t.Error(err)
		}
	}()

	logs := runTrueTask(t, nil)

	for _, d := range stale {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the stale cgroup %s is left: %v", d, err)
		}
	}
	for _, d := range inUse {
		if !slices.Contains(cgroupPids(d), sleep.Process.Pid) {
			t.Errorf("the cgroup in use %s lost its process (or went)", d)
		}
	}
	if b, err := os.ReadFile("/proc/" + pid + "/stat"); err != nil || strings.Fields(string(b))[2] == "Z" {
		t.Errorf("the process in a cgroup the sweep found was killed: %q, %v", b, err)
	}
	// Whether the live cgroup still exists is not this executor's alone
	// to say: another process's executor (another package's tests, run
	// at the same time) may sweep it while it is empty, which add
	// survives (the next test). What this executor's sweep removed, it
	// logged.
	for _, d := range live.dirs {
		if strings.Contains(logs.String(), "cgroup="+d+"\n") {
			t.Errorf("this executor swept the cgroup %s of a task of this process", d)
		}
	}
}

// A task cgroup that another process's executor sweeps while it is empty
// (made, its init not in it yet) is made again, with its limits, when
// the init is added: the task does not fail for it.
func TestTaskCgroupMadeAgainAfterSweep(t *testing.T) {
	cgroupsOnly(t)
	cg, err := newTaskCgroup(fmt.Sprintf("attempt-swept-%d", os.Getpid()), cgroupLimits{Pids: 10})
	if err != nil {
		t.Fatal(err)
	}
	sleep := startSleep(t)
	defer func() {
		if err := cg.remove(); err != nil {
			t.Error(err)
		}
	}()
	otherProcess := &cgroupSet{dirs: make(map[string]int)} // knows nothing of this task
	for _, d := range cg.dirs {
		removed, err := sweepCgroupDir(filepath.Dir(d), otherProcess, "")
		if err != nil || !slices.Contains(removed, d) {
			t.Fatalf("the sweep removed %q (%v), want %s among them", removed, err, d)
		}
	}
	if err := cg.add(sleep.Process.Pid); err != nil {
		t.Fatalf("add after a sweep: %v", err)
	}
	for _, d := range cg.dirs {
		if !slices.Contains(cgroupPids(d), sleep.Process.Pid) {
			t.Errorf("the process is not in %s", d)
		}
	}
	if b, err := os.ReadFile(filepath.Join(cg.dirs[0], "pids.max")); err != nil || strings.TrimSpace(string(b)) != "10" {
		t.Errorf("pids.max %q, %v; want 10", b, err)
	}
}

// runTrueTask runs `true` through a new executor, in the sandbox sb asks
// for (nil: the default), and returns the executor's log; a host that
// refuses the sandbox even to root skips the test.
func runTrueTask(t *testing.T, sb *executor.Sandbox) *syncbuf.Buffer {
	t.Helper()
	var logs syncbuf.Buffer
	e := New(Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	task := executortest.NewTask(t, []byte(`{"command": "true"}`))
	if sb != nil {
		if task.Env == nil {
			task.Env = map[string]string{}
		}
		task.Env[executor.EnvSandbox] = sb.Encode()
	}
	if err := e.Start(t.Context(), task); err != nil {
		if errors.Is(err, ErrSandbox) {
			t.Skipf("this host refuses the sandbox even to root: %v", err)
		}
		t.Fatal(err)
	}
	if res, err := e.Wait(t.Context(), task.ID); err != nil || res.ExitCode != 0 {
		t.Fatalf("the task: %+v, %v", res, err)
	}
	return &logs
}
