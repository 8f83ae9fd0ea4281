//go:build !linux

package cloexec

// Mark does nothing outside Linux: there is no portable way to list a
// process's descriptors.
func Mark() error { return nil }
