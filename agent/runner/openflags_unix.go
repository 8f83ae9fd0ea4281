//go:build unix

package runner

import "syscall"

// readOutputFlags open an output for reading without following a final
// symbolic link, and without blocking on a FIFO planted in its place.
const readOutputFlags = syscall.O_RDONLY | syscall.O_NOFOLLOW | syscall.O_NONBLOCK
