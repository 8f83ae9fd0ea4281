package runner

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
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
	cmd := startSleep(t)
	dead, err := syscall.Open("/proc/"+strconv.Itoa(cmd.Process.Pid)+"/status", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	_ = syscall.Close(tab.open[self].fd)
	tab.open[self] = statusFile{fd: dead, gen: tab.gen}

	pids, err := tab.owned(me)
	if err != nil || !slices.Contains(pids, self) {
		t.Fatalf("this process after its kept file went stale: %v %v", pids, err)
	}
	if f := tab.open[self]; f.fd == dead {
		t.Fatal("the stale file was kept")
	}
}

// One scan of /proc for a uid's processes, as at every task's end: with
// the status files kept open, and opening each every scan as before.
func BenchmarkLeftoverScan(b *testing.B) {
	me := uint32(os.Getuid())
	b.Run("kept", func(b *testing.B) {
		tab := newProcTable()
		for b.Loop() {
			if _, err := tab.owned(me); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("reopened", func(b *testing.B) {
		tab := newProcTable()
		for b.Loop() {
			if _, err := tab.owned(me); err != nil {
				b.Fatal(err)
			}
			for pid, f := range tab.open {
				_ = syscall.Close(f.fd)
				delete(tab.open, pid)
			}
		}
	})
}

// Requests made together share scans, and each gets its own uid's
// processes from a scan that started after it asked.
func TestProcTableBatchesRequests(t *testing.T) {
	tab := newProcTable()
	me := uint32(os.Getuid())
	cmd := startSleep(t)
	const callers = 32
	var wg sync.WaitGroup
	errs := make(chan string, callers)
	for i := range callers {
		wg.Go(func() {
			uid := me
			if i%2 == 1 {
				uid = me + 54321 // a uid with no process
			}
			pids, err := tab.owned(uid)
			switch {
			case err != nil:
				errs <- err.Error()
			case uid == me && !slices.Contains(pids, cmd.Process.Pid):
				errs <- "own uid: the sleep is missing"
			case uid != me && len(pids) != 0:
				errs <- "empty uid: processes listed"
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if tab.scans < 1 || tab.scans > callers {
		t.Fatalf("%d scans for %d requests", tab.scans, callers)
	}
	t.Logf("%d requests served by %d scans", callers, tab.scans)
}
