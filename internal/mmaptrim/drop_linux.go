package mmaptrim

import (
	"bufio"
	"bytes"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Drop removes [addr, addr+n) of a read-only shared file mapping from the
// page tables; the data stays in the page cache.
func Drop(addr, n uintptr) {
	_, _, _ = unix.Syscall(unix.SYS_MADVISE, addr, n, unix.MADV_DONTNEED)
}

// DropFile drops every read-only shared mapping of the file at path that
// /proc/self/maps lists, for a caller that does not know the mapping's
// address (path as the kernel names it: absolute, links resolved).
func DropFile(path string) {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 4096), 1<<20)
	suffix := []byte(" " + path)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasSuffix(line, suffix) {
			continue
		}
		// start-end perms offset dev inode path
		fields := bytes.Fields(line)
		if len(fields) < 6 || string(fields[1]) != "r--s" {
			continue
		}
		start, end, ok := bytes.Cut(fields[0], []byte("-"))
		if !ok {
			continue
		}
		lo, err1 := strconv.ParseUint(string(start), 16, 64)
		hi, err2 := strconv.ParseUint(string(end), 16, 64)
		if err1 != nil || err2 != nil || hi <= lo {
			continue
		}
		Drop(uintptr(lo), uintptr(hi-lo))
	}
}
