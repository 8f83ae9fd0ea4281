//go:build !linux

package cluster

// trimMapping does nothing where madvise is not used.
func trimMapping(string) {}
