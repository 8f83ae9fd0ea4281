package runner

import (
	"bytes"
	"slices"
	"strconv"
	"syscall"
)

// procStatus is what the agent reads of a /proc/<pid>/status text: the
// process's four uids (real, effective, saved, filesystem) and whether it
// is still alive (not a zombie, not dead).
type procStatus struct {
	uids [4]uint32
	live bool
}

// owns reports whether uid is one of the process's uids and it is alive.
func (p procStatus) owns(uid uint32) bool { return p.live && slices.Contains(p.uids[:], uid) }

// parseStatus reads a status text; ok is false when its Uid line is
// missing or malformed (a text cut short).
func parseStatus(status []byte) (p procStatus, ok bool) {
	p.live = true
	for line := range bytes.Lines(status) {
		if rest, found := bytes.CutPrefix(line, []byte("State:")); found {
			rest = bytes.TrimSpace(rest)
			p.live = !bytes.HasPrefix(rest, []byte("Z")) && !bytes.HasPrefix(rest, []byte("X"))
			continue
		}
		rest, found := bytes.CutPrefix(line, []byte("Uid:"))
		if !found {
			continue
		}
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
		return p, true // Uid comes after State
	}
	return procStatus{}, false
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
// filesystem); ok is false for a process that is gone or a zombie. Unlike
// its environment, a process cannot choose these: an unprivileged task
// cannot take another task's uid.
func ProcessUIDs(pid uint32) (uids [4]uint32, ok bool) {
	p, ok := readStatus(make([]byte, statusPrefix), "/proc/"+strconv.FormatUint(uint64(pid), 10)+"/status")
	if !ok || !p.live {
		return uids, false
	}
	return p.uids, true
}
