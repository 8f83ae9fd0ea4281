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
// agent assigned. executor.EnvSandbox, the agent's word to the executor,
// is removed.
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
// # Sandbox
//
// On Linux, as root, each task runs in a sandbox of its own, unless
// Options.DisableSandbox or Task.Env's executor.EnvSandbox says not to.
// The executor starts its own program again as the sandbox's init
// (sandboxinit_linux.go, recognised before main runs) in new PID, mount
// and IPC namespaces, with SIGKILL as its parent-death signal, and puts
// it in a cgroup of the task's own (cgroup_linux.go: v2 where the host
// has it, else v1) with the limits the agent asked for (a pids limit of
// executor.DefaultSandboxPids by default); before it makes the first,
// it removes the empty task cgroups a plugin killed with SIGKILL left
// (rmdir only: nothing is killed). The init, PID 1 of the new
// namespace, mounts a /proc of it, an empty tmpfs on /tmp, /var/tmp,
// /dev/shm and /run/lock (each of bounded size: the smaller of
// Options.TmpfsBytes and the task's memory limit, else an eighth of the
// host's RAM), an empty read-only directory over each path the
// agent hides (its data dir, config, the root of the task directories)
// and binds the task's own directory back (mounts_linux.go); it makes
// every descriptor above 2 close-on-exec, sets no_new_privs, and starts
// the task's process as the task's user, in a process group of its own.
// It passes SIGTERM and the like on to that group, reaps orphans, and
// exits with the task's status once the task's process ends; the kernel
// then kills everything left in the namespace, before the executor's
// wait for the init returns. So nothing a task starts outlives it, with
// no scan and no race. Stop sends SIGTERM (passed on), then kills the
// init after the grace period. A sandbox that cannot be built fails
// Start with an error wrapping ErrSandbox that names the step ("sandbox:
// mount /tmp: operation not permitted"); there is no fallback. Without
// root the executor cannot build one: it says so in its log, once, and
// runs tasks as described next.
//
// Without a sandbox, each task runs in its own process group. Stop sends
// SIGTERM to the group and SIGKILL once the grace period has passed. When
// the main process ends, whatever is left of its group is killed. On
// Linux a task's main process is also killed if the plugin process dies
// (its parent-death signal); the rest of its group is not, which is why
// KillAll exists: `gpulayer plugin exec` calls it on SIGTERM, the
// parent-death signal the agent gives it, so that an agent that dies
// takes every process of its tasks with it. A process that leaves the
// group escapes all of this; the agent's end-of-task scan of the task's
// uid is then all that catches it.
//
// Either way a task killed by a signal ends with exit code 128+signal
// and a Reason naming it.
//
// Output is kept in memory per task (8 MiB by default, oldest dropped
// first with a marker), so Logs replays from the start at any time. Ended
// tasks are remembered up to Options.MaxEnded, oldest forgotten first.
package exec
