// Package runner carries one assigned task through its life on the agent:
// it marks the attempt started, runs it through an executor plugin with the
// GPUs the coordinator assigned, ships its output in order, enforces the
// timeout and cancellation (stop with a grace period, then kill), and
// reports how it ended.
//
// Each task runs as a user Users hands out (a uid of its own per slot when
// the agent is root), in a directory of its own (0700, owned by that user,
// its HOME), with an environment built from an allowlist (taskEnv). When
// it ended, the processes left under an exclusive uid are killed and the
// directory removed before the user is handed out again.
//
// A task with a share of a GPU (gpu_sharing) runs beside the other shares
// of its GPU, told its share; the agent's watchdog stops one over it
// through StopOverShare (share.go).
package runner
