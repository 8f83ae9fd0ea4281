package runner

import (
	"bytes"
	"strconv"
	"syscall"
)

// procStatus is what the agent reads of a /proc/<pid>/status text: the
// process's four uids (real, effective, saved, filesystem) and whether it
// is still alive.
type procStatus struct {
	uids [4]uint32
	live bool
	// kthread is set for a kernel thread (its Kthread line, Linux 6.x and
	// later, says 1, and its uids are root's): procTable reads it once.
	kthread bool
}

// parseStatus reads a status text; ok is false when its Uid line is
// missing or malformed (a text cut short).
//
// A process is alive unless it is dead, or a zombie with no thread left.
// A thread-group leader that exited while its other threads run shows as
// a zombie, yet the process runs on, holding what it held (GPU memory
// included): its Threads line, which follows Uid, tells.
func parseStatus(status []byte) (p procStatus, ok bool) {
	zombie, seenUID := false, false
	off := 0 // where the text after line starts
	for line := range bytes.Lines(status) {
		off += len(line)
		if rest, found := bytes.CutPrefix(line, []byte("State:")); found {
			rest = bytes.TrimSpace(rest)
			if bytes.HasPrefix(rest, []byte("X")) {
				return procStatus{}, false // dead
			}
			zombie = bytes.HasPrefix(rest, []byte("Z"))
			continue
		}
		if rest, found := bytes.CutPrefix(line, []byte("Uid:")); found {
			f := bytes.Fields(rest)
			if len(f) != len(p.uids) || !bytes.HasSuffix(line, []byte("\n")) {
				return procStatus{}, false
			}
			for i, s := range f {
				n, err := strconv.ParseUint(string(s), 10, 32)
				if err != nil {
					return procStatus{}, false
				}
				p.uids[i] = uint32(n)
			}
			if !zombie {
				p.live = true
				if p.uids == [4]uint32{} {
					p.kthread = kernelThread(status[off:])
				}
				return p, true // Uid comes after State
			}
			seenUID = true
			continue
		}
		if rest, found := bytes.CutPrefix(line, []byte("Threads:")); found && seenUID && bytes.HasSuffix(line, []byte("\n")) {
			n, err := strconv.Atoi(string(bytes.TrimSpace(rest)))
			p.live = err == nil && n > 1 // the leader is one of them, gone
			return p, true
		}
	}
	if seenUID {
		return p, true // a zombie whose Threads line was not read: not live
	}
	return procStatus{}, false
}

// kernelThread reports whether the lines of a status text after its Uid
// line carry a whole "Kthread:\t1" line (it follows the NS* lines).
func kernelThread(after []byte) bool {
	for line := range bytes.Lines(after) {
		if rest, found := bytes.CutPrefix(line, []byte("Kthread:")); found {
			return bytes.HasSuffix(line, []byte("\n")) && string(bytes.TrimSpace(rest)) == "1"
		}
		if bytes.HasPrefix(line, []byte("Threads:")) {
			return false // Kthread comes before Threads
		}
	}
	return false
}

// statusPrefix is how much of /proc/<pid>/status is read: its State and
// Uid lines come within the first few hundred bytes (after Name, Umask,
// State, Tgid, Ngid, Pid, PPid and TracerPid; a Name is at most 64
// bytes, escaped).
const statusPrefix = 1024

// readStatus reads the start of the status file at path into buf with
// bare system calls (an open, a read and a close: it runs for every
// process at each task's end). A process that is gone reads as not ok.
func readStatus(buf []byte, path string) (procStatus, bool) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return procStatus{}, false
	}
	n, err := syscall.Read(fd, buf)
	_ = syscall.Close(fd)
	if err != nil || n <= 0 {
		return procStatus{}, false
	}
	return parseStatus(buf[:n])
}

// ProcessUIDs reads a live process's four uids (real, effective, saved,
// filesystem); ok is false for a process that is gone or a zombie with no
// thread left (a zombie leader whose other threads run is alive:
// parseStatus). Unlike its environment, a process cannot choose these: an
// unprivileged task cannot take another task's uid.
func ProcessUIDs(pid uint32) (uids [4]uint32, ok bool) {
	p, ok := readStatus(make([]byte, statusPrefix), "/proc/"+strconv.FormatUint(uint64(pid), 10)+"/status")
	if !ok || !p.live {
		return uids, false
	}
	return p.uids, true
}
