package exec_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/plugins/exec"
	"github.com/gpulayer/gpulayer/sdk/executor"
	"github.com/gpulayer/gpulayer/sdk/executor/executortest"
)

// envNames runs `env` as a task and returns the variable names it saw.
func envNames(t *testing.T, e executor.Executor, task executor.Task) []string {
	t.Helper()
	stdout, stderr, res := run(t, e, task)
	if res.ExitCode != 0 {
		t.Fatalf("env: %+v, stderr %q", res, stderr)
	}
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		name, _, _ := strings.Cut(line, "=")
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// The attack: a job ran `env` and printed the agent's tokens. Whatever the
// plugin process holds, the task sees only PATH, LANG, LC_*, TZ, HOME,
// TMPDIR, its config's env and Task.Env.
func TestTaskEnvironmentIsAllowlisted(t *testing.T) {
	t.Setenv("GPULAYER_ADMIN_TOKEN", "glc_admin_canary")
	t.Setenv("GPULAYER_JOIN_TOKEN", "glj_join_canary")
	t.Setenv("GL_CANARY", "canary")
	t.Setenv("LANG", "C.UTF-8")
	e := exec.New(exec.Options{})
	task := executortest.NewTask(t, cfg(exec.Config{Command: "env", Env: map[string]string{"JOB_VAR": "j"}}))
	task.Env = map[string]string{"CUDA_VISIBLE_DEVICES": "GPU-1", "GPULAYER_TASK_ID": "t1"}
	got := envNames(t, e, task)
	allowed := []string{"CUDA_VISIBLE_DEVICES", "GPULAYER_TASK_ID", "HOME", "JOB_VAR", "LANG", "PATH", "TMPDIR", "TZ", "PWD", "SHLVL", "_"}
	for _, name := range got {
		if !slices.Contains(allowed, name) && !strings.HasPrefix(name, "LC_") {
			t.Errorf("task saw %s, which is not on the allowlist (all: %v)", name, got)
		}
	}
	for _, want := range []string{"CUDA_VISIBLE_DEVICES", "GPULAYER_TASK_ID", "HOME", "JOB_VAR", "LANG", "TMPDIR"} {
		if !slices.Contains(got, want) {
			t.Errorf("task lacks %s (all: %v)", want, got)
		}
	}
}

// The attack: config.dir "/" and "../../" ran the task outside its
// directory. Each is refused at Start as an invalid config, and so is a
// dir whose symbolic link leads out.
func TestDirOutsideWorkDirRefused(t *testing.T) {
	e := exec.New(exec.Options{})
	for _, dir := range []string{"/", "../../", "a/../../b", "escape", "escape/etc"} {
		task := executortest.NewTask(t, cfg(exec.Config{Command: "pwd", Dir: dir}))
		if err := os.Symlink("/", filepath.Join(task.WorkDir, "escape")); err != nil {
			t.Fatal(err)
		}
		err := e.Start(t.Context(), task)
		if !errors.Is(err, executor.ErrInvalidConfig) {
			t.Errorf("dir %q: Start = %v, want ErrInvalidConfig", dir, err)
		}
	}
}

// rootOnly skips a test that switches users unless it runs as root, as CI
// does.
func rootOnly(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("switching a task's user needs root; CI runs this as root")
	}
}

// The attack: a task read the agent's worker credential. Run as the uid
// and gid Task.Env names, with no supplementary groups, it gets EACCES on
// a 0600 file of the plugin's user. Without a sandbox, that is all that
// keeps it out (in one, the file is not even there to refuse:
// TestSandboxHidesHostPaths).
func TestRunsAsTaskUser(t *testing.T) {
	rootOnly(t)
	secret := filepath.Join(t.TempDir(), "worker-credential.json")
	if err := os.WriteFile(secret, []byte(`{"worker_token":"glw_canary"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(secret), 0o755); err != nil {
		t.Fatal(err)
	}
	e := exec.New(exec.Options{DisableSandbox: true})
	task := executortest.NewTask(t, shell(`id -u; id -g; id -G; cat "$1" || echo "refused"`, secret))
	// The task user must reach its work dir: t.TempDir's root is 0700.
	if err := os.Chmod(filepath.Dir(task.WorkDir), 0o711); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(task.WorkDir, 61234, 61235); err != nil {
		t.Fatal(err)
	}
	task.Env = map[string]string{executor.EnvTaskUID: "61234", executor.EnvTaskGID: "61235"}
	stdout, stderr, res := run(t, e, task)
	if want := "61234\n61235\n61235\nrefused\n"; stdout != want {
		t.Errorf("stdout %q, want %q (stderr %q, %+v)", stdout, want, stderr, res)
	}
	if !strings.Contains(stderr, "Permission denied") || strings.Contains(stdout, "glw_canary") {
		t.Errorf("reading the credential was not refused with EACCES: stdout %q stderr %q", stdout, stderr)
	}
}

func TestBadTaskUserRefused(t *testing.T) {
	e := exec.New(exec.Options{})
	for _, env := range []map[string]string{
		{executor.EnvTaskUID: "0", executor.EnvTaskGID: "0"},
		{executor.EnvTaskUID: "61234"},
		{executor.EnvTaskUID: "x", executor.EnvTaskGID: "1"},
	} {
		task := executortest.NewTask(t, shell("true"))
		task.Env = env
		if err := e.Start(t.Context(), task); !errors.Is(err, executor.ErrBadTaskUser) {
			t.Errorf("Task.Env %v: Start = %v, want ErrBadTaskUser", env, err)
		}
	}
}
