//go:build !linux

package runner

// AttemptOfPID has no process table to read outside Linux.
func AttemptOfPID(uint32) (string, bool) { return "", false }
