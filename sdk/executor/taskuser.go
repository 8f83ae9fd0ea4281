package executor

import (
	"errors"
	"fmt"
	"strconv"
)

// The agent names the user a task must run as in Task.Env under these two
// variables (decimal uid and gid). They are present when the agent runs as
// root and switches users; absent when it runs tasks as its own user. An
// executor that starts processes must start them as that uid and gid with
// no supplementary groups, or refuse Start; it must read them from
// Task.Env only, never from a job's own config, which cannot override
// Task.Env. The task sees them too: they are not secret.
const (
	EnvTaskUID = "GPULAYER_TASK_UID"
	EnvTaskGID = "GPULAYER_TASK_GID"
)

// ErrBadTaskUser is returned by TaskUser for a malformed or root identity.
var ErrBadTaskUser = errors.New("executor: bad task user")

// TaskUser returns the uid and gid Task.Env asks the task to run as; ok is
// false when it names none. Half a pair, a value that is not a decimal
// uint32, or uid or gid 0 is refused with ErrBadTaskUser: the agent never
// asks for root.
func TaskUser(t Task) (uid, gid uint32, ok bool, err error) {
	su, hasU := t.Env[EnvTaskUID]
	sg, hasG := t.Env[EnvTaskGID]
	if !hasU && !hasG {
		return 0, 0, false, nil
	}
	if !hasU || !hasG {
		return 0, 0, false, fmt.Errorf("%w: %s and %s go together", ErrBadTaskUser, EnvTaskUID, EnvTaskGID)
	}
	u, err1 := strconv.ParseUint(su, 10, 32)
	g, err2 := strconv.ParseUint(sg, 10, 32)
	if err1 != nil || err2 != nil || u == 0 || g == 0 {
		return 0, 0, false, fmt.Errorf("%w: %s=%q %s=%q (want non-zero decimal ids)", ErrBadTaskUser, EnvTaskUID, su, EnvTaskGID, sg)
	}
	return uint32(u), uint32(g), true, nil
}
