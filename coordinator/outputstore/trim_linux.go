package outputstore

import "golang.org/x/sys/unix"

// dropPages removes [addr, addr+n) of a read-only file mapping from the
// page tables; the data stays in the page cache.
func dropPages(addr, n uintptr) {
	_, _, _ = unix.Syscall(unix.SYS_MADVISE, addr, n, unix.MADV_DONTNEED)
}
