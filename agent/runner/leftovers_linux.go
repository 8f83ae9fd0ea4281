package runner

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

// leftoverDeadline bounds how long killLeftovers keeps at it.
const leftoverDeadline = 5 * time.Second

// killLeftovers kills every process still running under uid (a task's
// process that left its process group, a daemon it started), so that the
// next task given the uid shares it with nothing. It scans /proc until a
// pass finds no live process of uid, or the deadline passes.
func killLeftovers(uid uint32) error {
	return killUntilGone(fmt.Sprintf("uid %d", uid), func() ([]int, error) { return processesOf(uid) })
}

// killUntilGone sends SIGKILL to every process list returns, and lists
// again, until a pass finds none or leftoverDeadline passes; what names
// them in the error.
func killUntilGone(what string, list func() ([]int, error)) error {
	deadline := time.Now().Add(leftoverDeadline)
	for {
		pids, err := list()
		if err != nil {
			// A list that failed (out of descriptors, say) may
			// succeed a moment later.
			if time.Now().After(deadline) {
				return err
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if len(pids) == 0 {
			return nil
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes of %s still running after %v: %v", what, leftoverDeadline, pids)
		}
		// SIGKILL is delivered asynchronously: look again once the
		// scheduler has had a moment.
		time.Sleep(10 * time.Millisecond)
	}
}

// processesOf lists the live (not zombie) processes whose real, effective,
// saved or filesystem uid is uid (procTable).
func processesOf(uid uint32) ([]int, error) { return procs.owned(uid) }

// killAttempt kills every process that carries attemptID in its
// environment (GPULAYER_ATTEMPT_ID, which the agent gives every task and
// its children inherit), whatever its user or process group: what a task
// left running when its executor died under it. The agent reads the
// environment of its own user's processes, and as root of every process.
// A process that replaced its whole environment escapes it.
func killAttempt(attemptID string) error {
	marker := []byte(attemptIDVar + "=" + attemptID + "\x00")
	return killUntilGone("attempt "+attemptID, func() ([]int, error) { return processesWith(marker) })
}

// processesWith lists the live processes whose environment holds the
// NUL-terminated entry marker.
func processesWith(marker []byte) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := environOf(e.Name())
		if err != nil { // gone, or not ours to read
			continue
		}
		if bytes.HasPrefix(env, marker) || bytes.Contains(env, append([]byte{0}, marker...)) {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}
