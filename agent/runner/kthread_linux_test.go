package runner

import (
	"bytes"
	"os"
	"slices"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// A status text marks a kernel thread only with a whole Kthread line
// saying 1 and root's uids, as a kernel thread's always are.
func TestParseStatusKernelThread(t *testing.T) {
	const head = "Name:\tkworker/0:1\nUmask:\t0000\nState:\tI (idle)\nTgid:\t9\nPid:\t9\nPPid:\t2\nTracerPid:\t0\n"
	for _, tc := range []struct {
		name, text string
		kthread    bool
	}{
		{"kernel thread", head + "Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nNSsid:\t0\nKthread:\t1\nThreads:\t1\n", true},
		{"user process of root", head + "Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nNSsid:\t0\nKthread:\t0\nThreads:\t1\n", false},
		{"Kthread 1 under a task uid", head + "Uid:\t70000\t70000\t70000\t70000\nNSsid:\t0\nKthread:\t1\nThreads:\t1\n", false},
		{"one uid not root", head + "Uid:\t0\t70000\t0\t0\nNSsid:\t0\nKthread:\t1\nThreads:\t1\n", false},
		{"Kthread line cut short", head + "Uid:\t0\t0\t0\t0\nNSsid:\t0\nKthread:\t1", false},
		{"no Kthread line (older kernel)", head + "Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nThreads:\t1\n", false},
		{"Kthread after Threads is not read", head + "Uid:\t0\t0\t0\t0\nThreads:\t1\nKthread:\t1\n", false},
		{"a Name that says Kthread", "Name:\tKthread:\t1\nState:\tS (sleeping)\nUid:\t0\t0\t0\t0\nThreads:\t1\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, ok := parseStatus([]byte(tc.text))
			if !ok || !p.live {
				t.Fatalf("parse: %+v %v", p, ok)
			}
			if p.kthread != tc.kthread {
				t.Fatalf("kthread %v, want %v", p.kthread, tc.kthread)
			}
		})
	}
}

// requireKernelThreads skips where the kernel names no kernel thread in
// status or has no pidfd_open: the table then reads every process.
func requireKernelThreads(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile("/proc/2/status")
	if err != nil || !bytes.Contains(b, []byte("\nKthread:\t1\n")) {
		t.Skip("no Kthread line in /proc/2/status on this kernel")
	}
	fd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		t.Skipf("pidfd_open: %v", err)
	}
	_ = syscall.Close(fd)
}

// A kernel thread is read once: later scans take it from its pidfd and
// leave its status file unread (here a file that reads nothing any
// more, which a read would have replaced).
func TestProcTableReadsKernelThreadsOnce(t *testing.T) {
	requireKernelThreads(t)
	tab := newProcTable()
	t.Cleanup(tab.closeAll)
	if _, err := tab.owned(uint32(os.Getuid())); err != nil {
		t.Fatal(err)
	}
	kpid, f := -1, statusFile{}
	for pid, kept := range tab.open {
		if kept.kthread {
			kpid, f = pid, kept
			break
		}
	}
	if kpid < 0 {
		t.Fatal("no kernel thread held after a scan, though the kernel names them")
	}
	if tab.pidfds == 0 {
		t.Fatal("kernel threads held without pidfds counted")
	}
	dead := deadStatusFile(t)
	_ = syscall.Close(f.fd)
	f.fd = dead
	tab.open[kpid] = f
	if _, err := tab.owned(uint32(os.Getuid())); err != nil {
		t.Fatal(err)
	}
	if got := tab.open[kpid]; got.fd != dead || !got.kthread {
		t.Fatalf("kernel thread %d read again: kept %+v, want its file %d left as it was", kpid, got, dead)
	}
	tab.closeAll()
	if tab.pidfds != 0 || len(tab.open) != 0 {
		t.Fatalf("after closeAll: %d pidfds, %d files", tab.pidfds, len(tab.open))
	}
}

// A pid held as a kernel thread whose thread has been reaped is read
// afresh: whatever process holds the number now is listed under its own
// uids. Here this test's own process stands in for a user process that
// took a kernel thread's pid.
func TestProcTableRereadsAKernelThreadsReusedPid(t *testing.T) {
	requireKernelThreads(t)
	tab := newProcTable()
	t.Cleanup(tab.closeAll)
	self, me := os.Getpid(), uint32(os.Getuid())
	if _, err := tab.owned(me); err != nil {
		t.Fatal(err)
	}
	cmd := startSleep(t)
	reaped, err := unix.PidfdOpen(cmd.Process.Pid, 0)
	if err != nil {
		t.Fatal(err)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	f := tab.open[self]
	f.kthread, f.pidfd = true, reaped
	tab.open[self] = f
	tab.pidfds++

	pids, err := tab.owned(me)
	if err != nil || !slices.Contains(pids, self) {
		t.Fatalf("processes of uid %d: %v %v, want this process %d, whose pid a reaped kernel thread held", me, pids, err, self)
	}
	if got := tab.open[self]; got.kthread {
		t.Fatalf("this process still held as a kernel thread: %+v", got)
	}
}
