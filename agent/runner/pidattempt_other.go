//go:build !linux

package runner

// AttemptOfPID has no process table to read outside Linux.
func AttemptOfPID(uint32) (string, bool) { return "", false }

// ProcessUIDs has no process table to read outside Linux.
func ProcessUIDs(uint32) ([4]uint32, bool) { return [4]uint32{}, false }
