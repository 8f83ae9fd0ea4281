package runner

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"syscall"
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

	// Used by the scan under way only.
	open    map[int]statusFile
	maxOpen int
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
// its pid listed.
type statusFile struct {
	fd  int
	gen uint64
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
			_ = syscall.Close(f.fd)
			delete(t.open, pid)
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
	if f, ok := t.open[pid]; ok {
		p, ok, err := t.pread(f.fd)
		if err == nil {
			t.open[pid] = statusFile{fd: f.fd, gen: t.gen}
			return p, ok, nil
		}
		_ = syscall.Close(f.fd)
		delete(t.open, pid)
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
	if err != nil || len(t.open) >= t.maxOpen {
		_ = syscall.Close(fd)
	} else {
		t.open[pid] = statusFile{fd: fd, gen: t.gen}
	}
	if err != nil {
		if gone(err) {
			return procStatus{}, false, nil
		}
		return procStatus{}, false, err
	}
	return p, ok, nil
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
		_ = syscall.Close(f.fd)
		delete(t.open, pid)
	}
}

// gone reports whether err says the process is no more.
func gone(err error) bool { return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ESRCH) }
