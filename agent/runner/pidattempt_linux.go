package runner

import (
	"bytes"
	"os"
	"strconv"
)

// AttemptOfPID names the attempt a process says it belongs to, from the
// GPULAYER_ATTEMPT_ID the agent gives every task and its children
// inherit (as killAttempt finds them). It reports false for a process
// that is gone, not the agent's to read, or carries no attempt id: a
// process that replaced its whole environment is not found. The
// environment is the process's own word; where each task runs under a
// uid of its own, ProcessUIDs is the one to go by.
func AttemptOfPID(pid uint32) (attemptID string, ok bool) {
	env, err := os.ReadFile("/proc/" + strconv.FormatUint(uint64(pid), 10) + "/environ")
	if err != nil {
		return "", false
	}
	for entry := range bytes.SplitSeq(env, []byte{0}) {
		if id, found := bytes.CutPrefix(entry, []byte(attemptIDVar+"=")); found && len(id) > 0 {
			return string(id), true
		}
	}
	return "", false
}
