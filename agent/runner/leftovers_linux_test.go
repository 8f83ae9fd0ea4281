package runner

import (
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"
)

// killAttempt kills the processes that carry the attempt's id in their
// environment, in whatever process group or session, and only those: an
// id that merely starts the same is another attempt's.
func TestKillAttemptByEnvironment(t *testing.T) {
	start := func(attempt string) *exec.Cmd {
		cmd := exec.Command("sleep", "120")
		cmd.Env = []string{"PATH=/usr/bin:/bin", "GPULAYER_ATTEMPT_ID=" + attempt, "OTHER=1"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // as a task's daemon would
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}
	victim, bystander := start("att-1"), start("att-10")
	exited := make(chan error, 1)
	go func() { exited <- victim.Wait() }()

	if err := killAttempt("att-1"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the attempt's process survived killAttempt")
	}
	if err := bystander.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("another attempt's process was killed: %v", err)
	}
}

// owns reports whether p is a live process with uid among its uids.
func owns(p procStatus, uid uint32) bool { return p.live && slices.Contains(p.uids[:], uid) }

// A status text names its owner on its Uid line, by any of the four
// uids; a zombie or dead process is owned by no one, and a text cut short
// by no one.
func TestStatusOwnedBy(t *testing.T) {
	status := func(state, uids string) []byte {
		return []byte("Name:\tsleep\nUmask:\t0022\nState:\t" + state + "\nTgid:\t42\nPid:\t42\nPPid:\t1\nTracerPid:\t0\nUid:\t" + uids + "\nGid:\t0\t0\t0\t0\n")
	}
	cases := []struct {
		name   string
		status []byte
		uid    uint32
		want   bool
	}{
		{"real uid", status("S (sleeping)", "61000\t0\t0\t0"), 61000, true},
		{"effective uid", status("R (running)", "0\t61000\t0\t0"), 61000, true},
		{"saved uid", status("S (sleeping)", "0\t0\t61000\t0"), 61000, true},
		{"filesystem uid", status("S (sleeping)", "0\t0\t0\t61000"), 61000, true},
		{"another uid", status("S (sleeping)", "61001\t61001\t61001\t61001"), 61000, false},
		{"a prefix of the uid is not it", status("S (sleeping)", "610000\t610000\t610000\t610000"), 61000, false},
		{"zombie", status("Z (zombie)", "61000\t61000\t61000\t61000"), 61000, false},
		{"dead", status("X (dead)", "61000\t61000\t61000\t61000"), 61000, false},
		{"cut before the Uid line", status("S (sleeping)", "61000")[:40], 61000, false},
		{"zombie leader with threads running", []byte("Name:\tcuda\nState:\tZ (zombie)\nTgid:\t42\nUid:\t61000\t61000\t61000\t61000\nGid:\t0\t0\t0\t0\nThreads:\t3\n"), 61000, true},
		{"zombie leader, its threads gone", []byte("Name:\tcuda\nState:\tZ (zombie)\nTgid:\t42\nUid:\t61000\t61000\t61000\t61000\nGid:\t0\t0\t0\t0\nThreads:\t1\n"), 61000, false},
		{"cut within the Uid line", []byte("State:\tS (sleeping)\nUid:\t61000\t61000\t610"), 61000, false},
	}
	for _, c := range cases {
		p, ok := parseStatus(c.status)
		if got := ok && owns(p, c.uid); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// This process, read from /proc: owned by its own uid.
	me := uint32(os.Getuid())
	if p, ok := readStatus(make([]byte, statusPrefix), "/proc/self/status"); !ok || !owns(p, me) {
		t.Errorf("/proc/self/status is not owned by uid %d: %+v %v", me, p, ok)
	}
}

// processesOf finds a process running under a uid, and killLeftovers
// leaves none.
func TestProcessesOfFindsAndKillsAUidsProcess(t *testing.T) {
	rootOnly(t)
	const uid = 64999
	cmd := exec.Command("sleep", "120")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	pids, err := processesOf(uid)
	if err != nil || !slices.Contains(pids, cmd.Process.Pid) {
		t.Fatalf("processes of uid %d: %v %v, want %d among them", uid, pids, err, cmd.Process.Pid)
	}
	if err := killLeftovers(uid); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if pids, _ := processesOf(uid); len(pids) != 0 {
		t.Fatalf("left after the kill: %v", pids)
	}
}
