package agent

import (
	"errors"
	"fmt"
	"math"
	"os/user"
	"strconv"

	"github.com/gpulayer/gpulayer/agent/runner"
)

// DefaultTaskUIDBase is the first uid of the per-slot task uid range.
const DefaultTaskUIDBase = 61000

// DefaultTaskUIDLockDir is where agents claim their task uids on a host.
const DefaultTaskUIDLockDir = "/run/gpulayer/task-uids"

// ErrSharedUserTasks is returned by New when the agent is not root, so
// cannot run tasks as another user, and was not told to accept tasks that
// run as its own.
var ErrSharedUserTasks = errors.New("agent: not running as root, so tasks would run as the agent's own user")

// taskPlan is how tasks get their users, decided once in New.
type taskPlan struct {
	fixed  *runner.User // a configured task user
	base   uint32       // otherwise, as root: one uid per slot from base
	shared bool         // otherwise: the agent's own user
	name   string       // USER/LOGNAME when shared
}

// planTaskUsers decides, for an agent running with effective uid euid,
// who its tasks run as:
//
//   - root with TaskUser: that user (a name, or a numeric uid whose gid is
//     its passwd entry's, or the same number without one); never root;
//   - root without: a uid (and gid of the same number) per task slot from
//     TaskUIDBase (default 61000), never shared by two running tasks;
//     refused with ErrMPSNeedsOneTaskUser when MPSPipeDir is set, since
//     MPS serves one uid at a time;
//   - not root: the agent's own user, but only with AllowSharedUserTasks,
//     since a task could then read the worker credential and other
//     tasks' environments; otherwise New fails with ErrSharedUserTasks.
func planTaskUsers(cfg Config, euid int) (taskPlan, error) {
	if euid != 0 {
		if cfg.TaskUser != "" {
			return taskPlan{}, fmt.Errorf("agent: a task user (%q) needs the agent to run as root to switch to it (it runs as uid %d)", cfg.TaskUser, euid)
		}
		if !cfg.AllowSharedUserTasks {
			return taskPlan{}, fmt.Errorf("%w (uid %d): a task could read the agent's worker credential in %s and the environment of other tasks. Run the agent as root (each task then runs as its own unprivileged uid from %d) or, on a machine where only trusted jobs run, pass --allow-shared-user-tasks",
				ErrSharedUserTasks, euid, cfg.DataDir, taskUIDBase(cfg))
		}
		name := strconv.Itoa(euid)
		if u, err := user.Current(); err == nil {
			name = u.Username
		}
		return taskPlan{shared: true, name: name}, nil
	}
	if cfg.TaskUser != "" {
		u, err := lookupTaskUser(cfg.TaskUser)
		if err != nil {
			return taskPlan{}, err
		}
		return taskPlan{fixed: &u}, nil
	}
	if cfg.MPSPipeDir != "" {
		return taskPlan{}, fmt.Errorf("%w: an MPS control daemon runs one server per uid and holds back clients of any other uid until it exits, so with a uid per task slot shared tasks would run one user at a time. Pass --task-user (every task then runs as that one user, and tasks can see each other's processes) or drop --mps-pipe-dir (shares are then unenforced, watched by the agent's watchdog)", ErrMPSNeedsOneTaskUser)
	}
	base := taskUIDBase(cfg)
	if base == 0 || uint64(base)+math.MaxUint16 > math.MaxUint32 {
		return taskPlan{}, fmt.Errorf("agent: task uid base %d is out of range (1 … %d)", base, uint32(math.MaxUint32-math.MaxUint16))
	}
	return taskPlan{base: base}, nil
}

// perSlot reports whether tasks run under uids of the per-slot range.
func (p taskPlan) perSlot() bool { return !p.shared && p.fixed == nil }

func taskUIDBase(cfg Config) uint32 {
	if cfg.TaskUIDBase == 0 {
		return DefaultTaskUIDBase
	}
	return cfg.TaskUIDBase
}

// lookupTaskUser resolves a configured task user, by name or number.
func lookupTaskUser(spec string) (runner.User, error) {
	var uid, gid uint64
	name := spec
	if n, err := strconv.ParseUint(spec, 10, 32); err == nil {
		uid, gid = n, n
		if u, err := user.LookupId(spec); err == nil {
			name = u.Username
			if g, err := strconv.ParseUint(u.Gid, 10, 32); err == nil {
				gid = g
			}
		}
	} else {
		u, err := user.Lookup(spec)
		if err != nil {
			return runner.User{}, fmt.Errorf("agent: task user %q: %w", spec, err)
		}
		uid, err = strconv.ParseUint(u.Uid, 10, 32)
		if err != nil {
			return runner.User{}, fmt.Errorf("agent: task user %q has uid %q", spec, u.Uid)
		}
		gid, err = strconv.ParseUint(u.Gid, 10, 32)
		if err != nil {
			return runner.User{}, fmt.Errorf("agent: task user %q has gid %q", spec, u.Gid)
		}
	}
	if uid == 0 || gid == 0 {
		return runner.User{}, fmt.Errorf("agent: task user %q is uid %d gid %d: tasks never run as root or with group root", spec, uid, gid)
	}
	return runner.User{UID: uint32(uid), GID: uint32(gid), Name: name}, nil
}

// users builds the runner's Users for at most slots tasks at once. A uid
// of the per-slot range that is a user or a group of this host is refused:
// the range must be reserved for tasks, since every process left under a
// task's uid is killed when the task ends.
func (p taskPlan) users(slots int) (runner.Users, error) {
	switch {
	case p.shared:
		return runner.SharedUser{Name: p.name}, nil
	case p.fixed != nil:
		return runner.FixedUser(*p.fixed), nil
	}
	for i := range slots {
		id := strconv.FormatUint(uint64(p.base)+uint64(i), 10)
		if u, err := user.LookupId(id); err == nil {
			return nil, fmt.Errorf("%w: uid %s of the task uid range (%d … %d) is the user %q: choose a range no user or group uses (--task-uid-base)", ErrTaskUIDsInUse, id, p.base, p.base+uint32(slots)-1, u.Username)
		}
		if g, err := user.LookupGroupId(id); err == nil {
			return nil, fmt.Errorf("%w: gid %s of the task uid range (%d … %d) is the group %q: choose a range no user or group uses (--task-uid-base)", ErrTaskUIDsInUse, id, p.base, p.base+uint32(slots)-1, g.Name)
		}
	}
	return runner.NewUIDPool(p.base, slots), nil
}

// describe says, for the start-up log, who tasks run as.
func (p taskPlan) describe(slots int) string {
	switch {
	case p.shared:
		return fmt.Sprintf("tasks run as the agent's own user %s (--allow-shared-user-tasks): they can read its credential and each other's environment", p.name)
	case p.fixed != nil:
		s := fmt.Sprintf("tasks run as user %s (uid %d, gid %d)", p.fixed.Name, p.fixed.UID, p.fixed.GID)
		if slots > 1 {
			s += "; concurrent tasks share it and can read each other's environment"
		}
		return s
	}
	return fmt.Sprintf("each task runs as its own uid, %d … %d, one per slot", p.base, p.base+uint32(slots)-1)
}
