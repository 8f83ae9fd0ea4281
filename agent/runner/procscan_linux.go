package runner

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// procTable lists the processes of task uids from /proc. A scan runs at
// every task's end (killLeftovers), so the table makes scans cheap in two
// ways:
//
//   - it keeps each process's status file open from one scan to the next:
//     reading an open /proc/<pid>/status again from offset 0 gives the
//     process's state afresh, one system call a process instead of an
//     open, a read and a close. A file whose process is gone reads ESRCH,
//     also once its pid is reused (the file belongs to the process, not
//     the number): it is closed, and the pid's new process opened;
//   - a kernel thread is read once: its credentials are the kernel's for
//     its whole life, so while a pidfd held on it says it lives, the
//     scan takes it as read. Once it is gone its pid is read afresh,
//     whatever process holds it then. (On kernels without a Kthread line
//     in status, or without pidfd_open, every process is read.)
//   - tasks that end together share scans: a request that comes while a
//     scan runs joins the next one, which starts once that scan is done
//     and serves every uid asked for meanwhile. A scan serves only the
//     requests made before it started, so none is answered from an older
//     look at /proc.
type procTable struct {
	// qmu guards the batching: next is the batch that the next scan
	// serves, busy whether a scan runs; scans counts them (for tests).
	qmu   sync.Mutex
	next  *scanBatch
	busy  bool
	scans int

	// beforeScan, when set (tests), runs as a scan starts.
	beforeScan func()
	// readKernelThreads, when set (benchmarks), reads kernel threads at
	// every scan like any other process: the reference the skip is
	// measured against.
	readKernelThreads bool

	// Used by the scan under way only.
	open    map[int]statusFile
	maxOpen int
	pidfds  int    // pidfds held on kernel threads, counted against maxOpen
	gen     uint64 // the scan under way, to close the files of pids gone
	buf     []byte
}

// scanBatch is the uids one scan serves and, once done is closed, what it
// found.
type scanBatch struct {
	uids map[uint32]bool
	// lead holds one token: whichever of the batch's requests takes it
	// runs the scan.
	lead  chan struct{}
	done  chan struct{}
	found map[uint32][]int
	err   error
}

// statusFile is an open /proc/<pid>/status and the scan that last saw
// its pid listed; for a kernel thread, also a pidfd on it.
type statusFile struct {
	fd      int
	gen     uint64
	kthread bool
	pidfd   int // when kthread
}

// maxOpenStatus bounds the status files kept open, and so does a quarter
// of the process's open-file limit: past either, the other processes are
// read by opening their file each scan.
const maxOpenStatus = 4096

// procs is the agent's one table.
var procs = newProcTable()

func newProcTable() *procTable {
	limit := maxOpenStatus
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err == nil {
		limit = int(min(uint64(limit), r.Cur/4))
	}
	return &procTable{open: map[int]statusFile{}, buf: make([]byte, statusPrefix), maxOpen: limit}
}

// owned lists the live processes of uid (by any of their four uids), from
// a scan that started after the call.
func (t *procTable) owned(uid uint32) ([]int, error) {
	t.qmu.Lock()
	b := t.next
	if b == nil {
		b = &scanBatch{uids: map[uint32]bool{}, lead: make(chan struct{}, 1), done: make(chan struct{})}
		t.next = b
		if !t.busy {
			t.busy = true
			b.lead <- struct{}{}
		}
	}
	b.uids[uid] = true
	t.qmu.Unlock()
	select {
	case <-b.done:
	case <-b.lead:
		t.lead(b)
	}
	return b.found[uid], b.err
}

// lead runs b's scan and hands the next batch its token, in a deferred
// call, so that the batches' waiters are let go even while a panic
// unwinds.
func (t *procTable) lead(b *scanBatch) {
	t.qmu.Lock()
	t.next = nil // later requests wait for the next scan
	t.scans++
	t.qmu.Unlock()
	defer func() {
		close(b.done)
		t.qmu.Lock()
		if t.next != nil {
			t.next.lead <- struct{}{}
		} else {
			t.busy = false
		}
		t.qmu.Unlock()
	}()
	b.err = errScanFailed // until the scan returns
	if t.beforeScan != nil {
		t.beforeScan()
	}
	b.found, b.err = t.scan(b.uids)
}

// errScanFailed answers the requests of a scan that did not return.
var errScanFailed = errors.New("runner: scanning /proc failed")

// scan lists the live processes of each of uids.
func (t *procTable) scan(uids map[uint32]bool) (map[uint32][]int, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	names, err := d.Readdirnames(-1)
	_ = d.Close()
	if err != nil {
		return nil, err
	}
	t.gen++
	found := map[uint32][]int{}
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		p, ok, err := t.read(pid, name)
		if err != nil {
			t.closeAll() // short of descriptors, perhaps: give back what is kept
			return nil, fmt.Errorf("runner: reading process %d: %w", pid, err)
		}
		if !ok || !p.live {
			continue
		}
		for i, u := range p.uids {
			if uids[u] && !slices.Contains(p.uids[:i], u) { // once per pid
				found[u] = append(found[u], pid)
			}
		}
	}
	for pid, f := range t.open {
		if f.gen != t.gen {
			t.drop(pid, f)
		}
	}
	return found, nil
}

// read reads pid's status through its open file, opening it when there
// is none or the one kept belongs to a process that is gone. ok is false
// for a process that is gone; any other failure (out of file descriptors,
// say) is an error: a scan that could not look at a process must not say
// the uid is free.
func (t *procTable) read(pid int, name string) (procStatus, bool, error) {
	if f, ok := t.open[pid]; ok && f.kthread {
		if kernelThreadLives(f.pidfd) {
			f.gen = t.gen
			t.open[pid] = f
			return procStatus{live: true, kthread: true}, true, nil
		}
		t.drop(pid, f) // its pid is read afresh below
	} else if ok {
		p, ok, err := t.pread(f.fd)
		if err == nil {
			t.open[pid] = statusFile{fd: f.fd, gen: t.gen}
			return p, ok, nil
		}
		t.drop(pid, f)
		if !gone(err) {
			return procStatus{}, false, err
		}
	}
	fd, err := syscall.Open("/proc/"+name+"/status", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		if gone(err) {
			return procStatus{}, false, nil
		}
		return procStatus{}, false, err
	}
	p, ok, err := t.pread(fd)
	if err != nil || len(t.open)+t.pidfds >= t.maxOpen {
		_ = syscall.Close(fd)
	} else {
		f := statusFile{fd: fd, gen: t.gen}
		if ok && p.kthread && !t.readKernelThreads && len(t.open)+t.pidfds+1 < t.maxOpen {
			f.pidfd, f.kthread = t.holdKernelThread(pid, fd)
		}
		t.open[pid] = f
	}
	if err != nil {
		if gone(err) {
			return procStatus{}, false, nil
		}
		return procStatus{}, false, err
	}
	return p, ok, nil
}

// holdKernelThread opens a pidfd on pid, whose status file fd read as a
// kernel thread's, and checks through fd that the thread still lives:
// the pidfd then holds that same thread (a pid is not reused while its
// process lives). ok is false when either fails.
func (t *procTable) holdKernelThread(pid, fd int) (pidfd int, ok bool) {
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return -1, false
	}
	if p, parsed, err := t.pread(fd); err != nil || !parsed || !p.kthread {
		_ = syscall.Close(pidfd)
		return -1, false
	}
	t.pidfds++
	return pidfd, true
}

// kernelThreadLives reports whether the process a pidfd holds has not
// been reaped: signal 0 is refused only for lack of permission then.
func kernelThreadLives(pidfd int) bool {
	err := unix.PidfdSendSignal(pidfd, 0, nil, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

// drop closes what is kept for pid.
func (t *procTable) drop(pid int, f statusFile) {
	_ = syscall.Close(f.fd)
	if f.kthread {
		_ = syscall.Close(f.pidfd)
		t.pidfds--
	}
	delete(t.open, pid)
}

// pread reads the status text of an open file from its start; ok is false
// for a text that does not parse.
func (t *procTable) pread(fd int) (procStatus, bool, error) {
	n, err := syscall.Pread(fd, t.buf, 0)
	if err != nil {
		return procStatus{}, false, err
	}
	p, ok := parseStatus(t.buf[:n])
	return p, ok, nil
}

// closeAll closes every kept status file.
func (t *procTable) closeAll() {
	for pid, f := range t.open {
		t.drop(pid, f)
	}
}

// gone reports whether err says the process is no more.
func gone(err error) bool { return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ESRCH) }
