//go:build unix

package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// claimTaskUIDs takes, for each uid of base … base+n-1, an exclusive lock
// on a file of that uid in dir, held until release is called or the
// process ends (flock(2): the kernel drops it with the process, so a
// crashed agent leaves no stale claim). Two agents on one host given
// overlapping ranges would kill each other's tasks (every process left
// under a task's uid is killed when the task ends), so the second to
// start fails with ErrTaskUIDsTaken. dir is made 0700 if missing: a task
// must not be able to take a lock in it.
func claimTaskUIDs(dir string, base uint32, n int) (release func(), err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("agent: task uid locks: %w", err)
	}
	var held []*os.File
	release = func() {
		for _, f := range held {
			_ = f.Close() // closing the last descriptor drops the lock
		}
	}
	for i := range n {
		uid := uint64(base) + uint64(i)
		f, err := os.OpenFile(filepath.Join(dir, strconv.FormatUint(uid, 10)), os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			release()
			return nil, fmt.Errorf("agent: task uid locks: %w", err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			_ = f.Close()
			release()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, fmt.Errorf("%w: uid %d (range %d … %d) is held by another agent on this host; give each agent a range of its own (--task-uid-base)", ErrTaskUIDsTaken, uid, base, uint64(base)+uint64(n)-1)
			}
			return nil, fmt.Errorf("agent: task uid lock %d: %w", uid, err)
		}
		held = append(held, f)
	}
	return release, nil
}
