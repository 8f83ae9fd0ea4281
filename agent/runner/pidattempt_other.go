//go:build !linux

package runner

// AttemptOfPID has no process table to read outside Linux.
func AttemptOfPID(uint32) (string, uint32, bool) { return "", 0, false }
