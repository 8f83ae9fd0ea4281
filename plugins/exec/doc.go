// Package exec is GpuLayer's built-in "exec" executor: it runs a task as a
// local process.
//
// A task's config is JSON:
//
//	{"command": "python3", "args": ["train.py"], "env": {"K": "V"}, "dir": "sub"}
//
// Unknown fields are refused with executor.ErrInvalidConfig. The command is
// looked up in the PATH of the task's environment when it has no slash.
// The environment is the plugin's own (less go-plugin's handshake
// variables, see executor.Environ), then the config's env, then Task.Env,
// which wins: CUDA_VISIBLE_DEVICES is always exactly what the agent
// assigned. dir defaults to Task.WorkDir; a relative dir is taken inside
// Task.WorkDir.
//
// Each task runs in its own process group. Stop sends SIGTERM to the group
// and SIGKILL once the grace period has passed. When the main process
// ends, whatever is left of its group is killed, so a task never leaves
// processes holding GPUs behind; on Linux the task's processes are also
// killed if the plugin process dies. A task killed by a signal ends with
// exit code 128+signal and a Reason naming it.
//
// Output is kept in memory per task (8 MiB by default, oldest dropped
// first with a marker), so Logs replays from the start at any time. Ended
// tasks are remembered up to Options.MaxEnded, oldest forgotten first.
package exec
