package runner

import (
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

	// Used by the scan under way only.
	open map[int]statusFile
	gen  uint64 // the scan under way, to close the files of pids gone
	buf  []byte
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

// maxOpenStatus bounds the status files kept open; past it, the other
// processes are read by opening their file each scan.
const maxOpenStatus = 4096

// procs is the agent's one table.
var procs = newProcTable()

func newProcTable() *procTable {
	return &procTable{open: map[int]statusFile{}, buf: make([]byte, statusPrefix)}
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
		t.qmu.Lock()
		t.next = nil // later requests wait for the next scan
		t.scans++
		t.qmu.Unlock()
		b.found, b.err = t.scan(b.uids)
		close(b.done)
		t.qmu.Lock()
		if t.next != nil {
			t.next.lead <- struct{}{}
		} else {
			t.busy = false
		}
		t.qmu.Unlock()
	}
	return b.found[uid], b.err
}

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
		p, ok := t.read(pid, name)
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
// is none or the one kept belongs to a process that is gone.
func (t *procTable) read(pid int, name string) (procStatus, bool) {
	if f, ok := t.open[pid]; ok {
		if p, ok := t.pread(f.fd); ok {
			t.open[pid] = statusFile{fd: f.fd, gen: t.gen}
			return p, true
		}
		_ = syscall.Close(f.fd)
		delete(t.open, pid)
	}
	path := "/proc/" + name + "/status"
	if len(t.open) >= maxOpenStatus {
		return readStatus(t.buf, path)
	}
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return procStatus{}, false
	}
	p, ok := t.pread(fd)
	if !ok {
		_ = syscall.Close(fd)
		return procStatus{}, false
	}
	t.open[pid] = statusFile{fd: fd, gen: t.gen}
	return p, true
}

func (t *procTable) pread(fd int) (procStatus, bool) {
	n, err := syscall.Pread(fd, t.buf, 0)
	if err != nil || n <= 0 {
		return procStatus{}, false
	}
	return parseStatus(t.buf[:n])
}
