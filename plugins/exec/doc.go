// Package exec is GpuLayer's built-in "exec" executor: it runs a task as a
// local process.
//
// A task's config is JSON:
//
//	{"command": "python3", "args": ["train.py"], "env": {"K": "V"}, "dir": "sub"}
//
// Unknown fields are refused with executor.ErrInvalidConfig. The command is
// looked up in the PATH of the task's environment when it has no slash.
// The environment is built from an allowlist: of the plugin's own
// environment only PATH, LANG, LC_* and TZ are kept (never go-plugin's
// handshake variables or anything else the plugin process holds); HOME
// and TMPDIR default to Task.WorkDir; then the config's env; then
// Task.Env, which wins: CUDA_VISIBLE_DEVICES is always exactly what the
// agent assigned.
//
// dir is relative to Task.WorkDir (empty means Task.WorkDir) and must stay
// inside it: an absolute path or a ".." that climbs out is an invalid
// config (api.CheckExecDir), and so is a dir that leads out through a
// symbolic link; the resolved path is the one used.
//
// When Task.Env names a user (executor.EnvTaskUID and EnvTaskGID), the
// task runs as that uid and gid with no supplementary groups; the plugin
// must then be root. A malformed or root identity is refused.
//
// Each task runs in its own process group. Stop sends SIGTERM to the group
// and SIGKILL once the grace period has passed. When the main process
// ends, whatever is left of its group is killed, so a task never leaves
// processes holding GPUs behind. On Linux a task's main process is also
// killed if the plugin process dies (its parent-death signal); the rest
// of its group is not, which is why KillAll exists: `gpulayer plugin exec`
// calls it on SIGTERM, the parent-death signal the agent gives it, so that
// an agent that dies takes every process of its tasks with it. A task
// killed by a signal ends with exit code 128+signal and a Reason naming
// it.
//
// Output is kept in memory per task (8 MiB by default, oldest dropped
// first with a marker), so Logs replays from the start at any time. Ended
// tasks are remembered up to Options.MaxEnded, oldest forgotten first.
package exec
