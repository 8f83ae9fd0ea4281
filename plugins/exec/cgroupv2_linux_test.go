package exec

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// mountCgroup2 mounts the unified (v2) hierarchy at a directory of the
// test's own, unmounted when it ends, and returns it. A cgroup v1 host
// mounts it too (the hierarchy holds the controllers v1 does not bind:
// often none of memory, pids and cpu, but cgroup.procs, cgroup.kill and
// child cgroups all the same); the test is skipped where the kernel
// refuses.
func mountCgroup2(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a cgroup2 hierarchy needs root; CI runs this as root")
	}
	mnt := t.TempDir()
	if err := unix.Mount("none", mnt, "cgroup2", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		t.Skipf("this host refuses to mount cgroup2: %v", err)
	}
	t.Cleanup(func() {
		_ = syscall.Rmdir(filepath.Join(mnt, cgroupParent)) // refused while another's tasks use it
		if err := unix.Unmount(mnt, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", mnt, err)
		}
	})
	return mnt
}

// controllersOf lists the controllers a v2 cgroup directory offers.
func controllersOf(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// forkingShell starts a shell that, once told on its stdin (after the
// test put it in a cgroup), starts a sleep of its own and prints its pid.
type forkingShell struct {
	cmd   *osexec.Cmd
	in    *os.File
	out   *bufio.Reader
	ended chan error
}

func startForkingShell(t *testing.T) *forkingShell {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := osexec.Command("sh", "-c", `read go; sleep 1000 & echo $!; wait`)
	cmd.Stdin, cmd.Stdout = inR, outW
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = inR.Close()
	_ = outW.Close()
	s := &forkingShell{cmd: cmd, in: inW, out: bufio.NewReader(outR), ended: make(chan error, 1)}
	go func() { s.ended <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-s.ended
		_ = inW.Close()
		_ = outR.Close()
	})
	return s
}

// fork has the shell start its child, and returns the child's pid.
func (s *forkingShell) fork(t *testing.T) int {
	t.Helper()
	if _, err := s.in.WriteString("go\n"); err != nil {
		t.Fatal(err)
	}
	line, err := s.out.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("child pid %q: %v", line, err)
	}
	return pid
}

// gone reports whether pid has ended: no such process, or a zombie
// waiting for a parent to reap it.
func gone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	_, rest, ok := strings.Cut(string(b), ") ")
	return ok && strings.HasPrefix(rest, "Z")
}

// The v2 code path, on a cgroup2 hierarchy the test mounts (the build
// hosts run cgroup v1, so /sys/fs/cgroup never takes it): a task's cgroup
// is made under gpulayer/, a process put in it takes the children it
// starts afterwards along, remove kills all of them (cgroup.kill) and
// removes the directory, and a sweep removes an empty leftover and keeps
// one in use. A limit whose controller the hierarchy does not offer fails
// naming the step and leaves no task cgroup behind.
func TestCgroupV2OnAMountedHierarchy(t *testing.T) {
	mnt := mountCgroup2(t)
	offered := controllersOf(t, mnt)
	t.Logf("controllers this cgroup2 hierarchy offers: %v", offered)

	t.Run("create, join, kill, remove", func(t *testing.T) {
		parent, err := makeV2Parent(mnt, nil)
		if err != nil {
			t.Fatal(err)
		}
		name := cgroupName(fmt.Sprintf("attempt-v2-%d", os.Getpid()))
		cg := &taskCgroup{v2: true, dirs: []string{filepath.Join(parent, name)}}
		if err := cg.setUp(0); err != nil {
			t.Fatal(err)
		}
		dir := cg.dirs[0]
		if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err != nil {
			t.Fatalf("the task cgroup has no cgroup.kill (Linux 5.14 and later): %v", err)
		}
		sh := startForkingShell(t)
		if err := cg.add(sh.cmd.Process.Pid); err != nil {
			t.Fatal(err)
		}
		child := sh.fork(t)
		want := "0::/" + cgroupParent + "/" + name
		for _, pid := range []int{sh.cmd.Process.Pid, child} {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
			if err != nil || !slices.Contains(strings.Split(strings.TrimSpace(string(b)), "\n"), want) {
				t.Fatalf("process %d is in %q (%v), want the line %q", pid, b, err, want)
			}
		}
		if pids := cgroupPids(dir); !slices.Contains(pids, sh.cmd.Process.Pid) || !slices.Contains(pids, child) {
			t.Fatalf("cgroup.procs lists %v, want the shell %d and its child %d", pids, sh.cmd.Process.Pid, child)
		}
		if err := cg.remove(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the task cgroup is still there: %v", err)
		}
		select {
		case err := <-sh.ended:
			var ee *osexec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Errorf("the shell ended with %v, want killed by SIGKILL", err)
			}
			sh.ended <- err // for the cleanup
		case <-time.After(10 * time.Second):
			t.Fatal("the shell outlived its cgroup's removal")
		}
		deadline := time.Now().Add(10 * time.Second)
		for !gone(child) {
			if time.Now().After(deadline) {
				t.Fatalf("the shell's child %d outlived its cgroup's removal", child)
			}
			time.Sleep(10 * time.Millisecond) // polling the kernel's process table, with a deadline
		}
	})

	t.Run("sweep", func(t *testing.T) {
		parent, err := makeV2Parent(mnt, nil)
		if err != nil {
			t.Fatal(err)
		}
		stale := filepath.Join(parent, cgroupName(fmt.Sprintf("attempt-v2-stale-%d", os.Getpid())))
		inUse := &taskCgroup{v2: true, dirs: []string{filepath.Join(parent, cgroupName(fmt.Sprintf("attempt-v2-in-use-%d", os.Getpid())))}}
		if err := os.Mkdir(stale, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := inUse.setUp(0); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := inUse.remove(); err != nil {
				t.Error(err)
			}
		}()
		sleep := startSleep(t)
		if err := inUse.add(sleep.Process.Pid); err != nil {
			t.Fatal(err)
		}
		removed, err := sweepCgroupDir(parent, &cgroupSet{dirs: make(map[string]int)}, "")
		if err != nil || !slices.Contains(removed, stale) || slices.Contains(removed, inUse.dirs[0]) {
			t.Fatalf("the sweep removed %v (%v), want %s and not %s", removed, err, stale, inUse.dirs[0])
		}
		if !slices.Contains(cgroupPids(inUse.dirs[0]), sleep.Process.Pid) {
			t.Errorf("the sweep disturbed the cgroup in use")
		}
	})

	t.Run("a limit without its controller", func(t *testing.T) {
		for _, tc := range []struct {
			ctrl string
			lim  cgroupLimits
		}{
			{"memory", cgroupLimits{MemoryBytes: 64 << 20}},
			{"pids", cgroupLimits{Pids: 64}},
			{"cpu", cgroupLimits{CPUMillis: 500}},
		} {
			if slices.Contains(offered, tc.ctrl) {
				continue // a v2 host: TestSandboxCgroupLimits covers it
			}
			name := fmt.Sprintf("attempt-v2-%s-%d", tc.ctrl, os.Getpid())
			cg, err := newTaskCgroupAt(mnt, name, tc.lim)
			if err == nil {
				_ = cg.remove()
				t.Fatalf("%s limit on a hierarchy without the controller: made %v", tc.ctrl, cg.dirs)
			}
			if !strings.Contains(err.Error(), "cgroup: enable "+tc.ctrl+" in "+mnt) {
				t.Errorf("%s: error %q does not name the step", tc.ctrl, err)
			}
			if _, err := os.Stat(filepath.Join(mnt, cgroupParent, cgroupName(name))); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s: a task cgroup was left: %v", tc.ctrl, err)
			}
		}
	})
}
