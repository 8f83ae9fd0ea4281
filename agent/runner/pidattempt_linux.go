package runner

import (
	"bytes"
	"os"
	"strconv"
)

// AttemptOfPID names the attempt a process says it belongs to, from the
// GPULAYER_ATTEMPT_ID the agent gives every task and its children
// inherit (as killAttempt finds them), with the process's real uid. It
// reports false for a process that is gone, not the agent's to read, or
// carries no attempt id: a process that replaced its whole environment is
// not found. The environment is the process's own word: a caller that
// acts on it checks the uid against the attempt's own task uid.
func AttemptOfPID(pid uint32) (attemptID string, uid uint32, ok bool) {
	dir := "/proc/" + strconv.FormatUint(uint64(pid), 10)
	env, err := os.ReadFile(dir + "/environ")
	if err != nil {
		return "", 0, false
	}
	for entry := range bytes.SplitSeq(env, []byte{0}) {
		if id, found := bytes.CutPrefix(entry, []byte(attemptIDVar+"=")); found && len(id) > 0 {
			attemptID = string(id)
			break
		}
	}
	if attemptID == "" {
		return "", 0, false
	}
	uid, ok = realUID(dir + "/status")
	return attemptID, uid, ok
}

// realUID reads the real uid from a /proc/<pid>/status file.
func realUID(status string) (uint32, bool) {
	b, err := os.ReadFile(status)
	if err != nil {
		return 0, false
	}
	for line := range bytes.Lines(b) {
		if rest, found := bytes.CutPrefix(line, []byte("Uid:")); found {
			f := bytes.Fields(rest)
			if len(f) == 0 {
				return 0, false
			}
			n, err := strconv.ParseUint(string(f[0]), 10, 32)
			return uint32(n), err == nil
		}
	}
	return 0, false
}
