//go:build unix

package exec

import (
	"syscall"

	"github.com/gpulayer/gpulayer/sdk/executor"
)

// credential is the identity Task.Env asks the task to run as, or nil to
// run it as the plugin's own user. An empty (non-nil) group list makes the
// child drop every supplementary group the plugin had.
func credential(t executor.Task) (*syscall.Credential, error) {
	uid, gid, ok, err := executor.TaskUser(t)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, nil
	}
	return &syscall.Credential{Uid: uid, Gid: gid, Groups: []uint32{}}, nil
}
