package coordinatortest

import (
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
)

// Test processes run side by side (go test runs packages in parallel, a
// long fault campaign runs beside other tests), and each picks ports that
// a coordinator binds a moment later, often in a child process: two can
// pick the same. A port is therefore claimed across processes first, with
// an flock(2) on a file named after it, held until the test that asked
// for it ends (and dropped by the kernel if the process ends first).

var (
	portLocksMu sync.Mutex
	portLocks   = map[int]*os.File{} // held until releasePort
)

// portLockDir holds the claim files.
var portLockDir = filepath.Join(os.TempDir(), "gpulayer-test-ports")

// claimPort reports whether this process now holds port's claim (false:
// another process does, or claims cannot be made here, in which case the
// bind check alone decides).
func claimPort(port int) bool {
	portLocksMu.Lock()
	defer portLocksMu.Unlock()
	if _, mine := portLocks[port]; mine {
		return false // handed out already in this process
	}
	if err := os.MkdirAll(portLockDir, 0o777); err != nil {
		return true
	}
	f, err := os.OpenFile(filepath.Join(portLockDir, strconv.Itoa(port)), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return true
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return false
	}
	portLocks[port] = f
	return true
}

// releasePort gives up this process's claim on port.
func releasePort(port int) {
	portLocksMu.Lock()
	defer portLocksMu.Unlock()
	if f, ok := portLocks[port]; ok {
		f.Close() // drops the lock
		delete(portLocks, port)
	}
}
