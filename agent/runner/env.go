package runner

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/executor"
)

// attemptIDVar names a task's attempt in its environment, which its
// processes inherit: how the agent finds what a task left running
// (killAttempt) and, where tasks share one user, whose GPU memory a
// process uses (AttemptOfPID).
const attemptIDVar = "GPULAYER_ATTEMPT_ID"

// taskEnv is the environment the agent gives a task, through the
// executor's Task.Env (which wins over the job's env): HOME and TMPDIR inside the
// task's directory, USER and LOGNAME naming the task's user, the task's
// ids (with its index and its job's task count), the GPU variables, and the uid and gid the executor must switch
// to when the task does not run as the agent's user.
//
// PATH, LANG, LC_* and TZ are defaults a job's env may override, so they
// are not in Task.Env, which would make them unchangeable: the executor
// process inherits them from the agent (pluginhost passes it only those
// and TMPDIR) and passes them on (the exec executor keeps only those of
// its own environment).
func taskEnv(a api.Assignment, dir string, u User) map[string]string {
	devs := strings.Join(a.Devices, ",")
	env := map[string]string{
		"CUDA_VISIBLE_DEVICES":   devs,
		"NVIDIA_VISIBLE_DEVICES": devs,
		"GPULAYER_TASK_ID":       a.ID,
		"GPULAYER_JOB_ID":        a.JobID,
		"GPULAYER_TASK_INDEX":    strconv.Itoa(a.Index),
		attemptIDVar:             a.AttemptID,
		"HOME":                   dir,
		"TMPDIR":                 filepath.Join(dir, "tmp"),
	}
	if a.Count > 0 { // from a coordinator that sends it
		env["GPULAYER_TASK_COUNT"] = strconv.Itoa(a.Count)
	}
	if u.Name != "" {
		env["USER"], env["LOGNAME"] = u.Name, u.Name
	}
	if u.Switch {
		env[executor.EnvTaskUID] = strconv.FormatUint(uint64(u.UID), 10)
		env[executor.EnvTaskGID] = strconv.FormatUint(uint64(u.GID), 10)
	}
	return env
}
