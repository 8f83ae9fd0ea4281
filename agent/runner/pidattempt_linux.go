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
	env, err := environOf(strconv.FormatUint(uint64(pid), 10))
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

// environOf reads process pid's environment. A process whose main thread
// has exited while its other threads run (a zombie leader) has no
// environment through /proc/<pid>/environ (empty, or ESRCH: the memory is
// no longer the leader's); it is then read through one of its live
// threads.
func environOf(pid string) ([]byte, error) {
	dir := "/proc/" + pid
	env, err := os.ReadFile(dir + "/environ")
	if err == nil && len(env) > 0 {
		return env, nil
	}
	if tids, terr := os.ReadDir(dir + "/task"); terr == nil {
		for _, tid := range tids {
			if tid.Name() == pid {
				continue
			}
			if e, err := os.ReadFile(dir + "/task/" + tid.Name() + "/environ"); err == nil && len(e) > 0 {
				return e, nil
			}
		}
	}
	return env, err
}
