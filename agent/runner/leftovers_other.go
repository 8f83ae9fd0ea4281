//go:build !linux

package runner

// killLeftovers has no process table to scan outside Linux: a task's
// escaped processes end with the executor's own clean-up or not at all.
func killLeftovers(uint32) error { return nil }

// processesOf cannot list processes here.
func processesOf(uint32) ([]int, error) { return nil, nil }

// killAttempt has no process table to scan outside Linux.
func killAttempt(string) error { return nil }
