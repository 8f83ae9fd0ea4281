//go:build !linux

package mmaptrim

// Drop does nothing where madvise is not used.
func Drop(addr, n uintptr) {}

// DropFile does nothing where madvise is not used.
func DropFile(path string) {}
