//go:build !linux

package outputstore

// dropPages does nothing where madvise is not used.
func dropPages(addr, n uintptr) {}
