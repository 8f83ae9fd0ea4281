package runner

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// startSleep starts a process that runs until the test kills it or ends.
func startSleep(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

// deadStatusFile opens the status file of a process, then ends and reaps
// the process: the file reads ESRCH from then on.
func deadStatusFile(t *testing.T) int {
	t.Helper()
	cmd := startSleep(t)
	dead, err := syscall.Open("/proc/"+strconv.Itoa(cmd.Process.Pid)+"/status", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	return dead
}

// The table finds a process through the status file it keeps open, and
// once the process is gone neither lists it nor keeps its file.
func TestProcTableKeepsFilesOfLiveProcessesOnly(t *testing.T) {
	tab := newProcTable()
	me := uint32(os.Getuid())
	cmd := startSleep(t)
	pid := cmd.Process.Pid
	for range 2 { // the first scan opens the file, the second reads it again
		pids, err := tab.owned(me)
		if err != nil || !slices.Contains(pids, pid) {
			t.Fatalf("processes of uid %d: %v %v, want %d among them", me, pids, err, pid)
		}
		if _, kept := tab.open[pid]; !kept {
			t.Fatalf("no status file kept for %d", pid)
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait() // reaped: its pid leaves /proc
	pids, err := tab.owned(me)
	if err != nil || slices.Contains(pids, pid) {
		t.Fatalf("after the process ended: %v %v, want %d gone", pids, err, pid)
	}
	if _, kept := tab.open[pid]; kept {
		t.Fatalf("the status file of %d, gone, is still open", pid)
	}
	// Another uid's processes are not its.
	if pids, _ := tab.owned(me + 12345); slices.Contains(pids, os.Getpid()) {
		t.Fatal("this process listed under another uid")
	}
}

// A process whose kept file reads ESRCH while its pid is listed (the pid
// reused by another process) is read through a fresh file.
func TestProcTableReopensAReusedPid(t *testing.T) {
	tab := newProcTable()
	self, me := os.Getpid(), uint32(os.Getuid())
	if _, err := tab.owned(me); err != nil {
		t.Fatal(err)
	}
	// Stand in for a reused pid: this process's kept file is swapped for
	// the status file of a process that has ended.
	dead := deadStatusFile(t)
	_ = syscall.Close(tab.open[self].fd)
	tab.open[self] = statusFile{fd: dead, gen: tab.gen}

	pids, err := tab.owned(me)
	if err != nil || !slices.Contains(pids, self) {
		t.Fatalf("this process after its kept file went stale: %v %v", pids, err)
	}
	// The kept file reads this process again. (Its descriptor number may
	// well be the stale one's: the table closed that one before opening
	// the fresh file, which takes the lowest free number.)
	buf := make([]byte, 64)
	if n, err := syscall.Pread(tab.open[self].fd, buf, 0); err != nil || n == 0 {
		t.Fatalf("the stale file was kept: read %d bytes, %v", n, err)
	}
}

// One scan of /proc for a uid's processes, as at every task's end: with
// the status files kept open, and opening each every scan as before.
func BenchmarkLeftoverScan(b *testing.B) {
	me := uint32(os.Getuid())
	for _, bc := range []struct {
		name string
		// kthreads: kernel threads read at every scan too; reopen: every
		// status file opened afresh each scan.
		kthreads, reopen bool
	}{
		{name: "kept"},
		{name: "kept-kernel-threads-read", kthreads: true},
		{name: "reopened", kthreads: true, reopen: true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			tab := newProcTable()
			tab.readKernelThreads = bc.kthreads
			b.Cleanup(tab.closeAll)
			for b.Loop() {
				if _, err := tab.owned(me); err != nil {
					b.Fatal(err)
				}
				if bc.reopen {
					tab.closeAll()
				}
			}
		})
	}
}

// Requests made while a scan runs are not answered by it: they share the
// next one, which starts after they asked.
func TestProcTableBatchesRequests(t *testing.T) {
	tab := newProcTable()
	me := uint32(os.Getuid())
	cmd := startSleep(t)
	release := make(chan struct{})
	first := true
	tab.beforeScan = func() { // runs in one leader at a time
		if first {
			first = false
			<-release
		}
	}
	type answer struct {
		pids []int
		err  error
	}
	ask := func(uid uint32) chan answer {
		ch := make(chan answer, 1)
		go func() {
			pids, err := tab.owned(uid)
			ch <- answer{pids, err}
		}()
		return ch
	}
	queued := func(n int) bool {
		tab.qmu.Lock()
		defer tab.qmu.Unlock()
		return tab.next != nil && len(tab.next.uids) == n
	}
	a := ask(me) // leads the first scan, held in beforeScan
	waitUntil(t, "the first scan to start", func() bool { tab.qmu.Lock(); defer tab.qmu.Unlock(); return tab.scans == 1 })
	late := []chan answer{ask(me), ask(me + 54321)}
	waitUntil(t, "both late requests to queue", func() bool { return queued(2) })
	close(release)
	for i, ch := range append([]chan answer{a}, late...) {
		got := <-ch
		switch {
		case got.err != nil:
			t.Fatalf("request %d: %v", i, got.err)
		case i < 2 && !slices.Contains(got.pids, cmd.Process.Pid):
			t.Fatalf("request %d: %v, want the sleep %d", i, got.pids, cmd.Process.Pid)
		case i == 2 && len(got.pids) != 0:
			t.Fatalf("request for an empty uid: %v", got.pids)
		}
	}
	if tab.scans != 2 {
		t.Fatalf("%d scans, want 2: the first, and one for both requests made during it", tab.scans)
	}
}

// waitUntil polls cond, state another goroutine or process moves, for up
// to 20 s; what names it in the failure.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 20 s for %s", what)
		}
		runtime.Gosched()
	}
}

// A scan that cannot open a process's status (out of file descriptors)
// fails instead of reporting the uid free: the leftover kill then keeps
// the uid out of circulation.
func TestProcTableFailsClosedWithoutDescriptors(t *testing.T) {
	var saved syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &saved); err != nil {
		t.Fatal(err)
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	tab := newProcTable()
	tight := saved
	tight.Cur = uint64(len(fds)) // one to spare (ReadDir's own is closed): /proc's listing, then none
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &tight); err != nil {
		t.Fatal(err)
	}
	_, err = tab.owned(uint32(os.Getuid()))
	if rerr := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &saved); rerr != nil {
		t.Fatal(rerr)
	}
	if !errors.Is(err, syscall.EMFILE) {
		t.Fatalf("scan out of descriptors: %v, want EMFILE", err)
	}
	if _, err := tab.owned(uint32(os.Getuid())); err != nil {
		t.Fatalf("scan with descriptors again: %v", err)
	}
}
