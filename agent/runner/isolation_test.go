package runner

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// The attack: a job running `env` printed the agent's admin and join
// tokens. The task sees the allowlist, its own variables, the GPU
// variables and its job's env, nothing else of the agent's environment.
func TestTaskEnvironmentIsAllowlisted(t *testing.T) {
	t.Setenv("GPULAYER_ADMIN_TOKEN", "glc_admin_canary")
	t.Setenv("GPULAYER_JOIN_TOKEN", "glj_join_canary")
	t.Setenv("GPULAYER_INSTANCE_TOKEN", "gli_canary")
	t.Setenv("GL_RUNNER_CANARY", "canary")
	r, rec, _ := newRunner(t, SharedUser{Name: "agent"})
	a := shellTask(t, "env", map[string]string{"JOB_VAR": "from-the-job"})
	a.Index, a.Count = 2, 5
	r.Run(t.Context(), a)
	stdout, stderr, ended := rec.out(a.ID)
	if ended != "finish 0" {
		t.Fatalf("ended %q, stderr %q", ended, stderr)
	}
	allowed := []string{"PATH", "LANG", "TZ", "HOME", "TMPDIR", "USER", "LOGNAME", "JOB_VAR",
		"CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "GPULAYER_TASK_ID", "GPULAYER_JOB_ID", "GPULAYER_TASK_INDEX", "GPULAYER_TASK_COUNT", "GPULAYER_ATTEMPT_ID",
		"PWD", "SHLVL", "_"} // the last three set by sh itself
	seen := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		name, value, _ := strings.Cut(line, "=")
		seen[name] = value
		if !slices.Contains(allowed, name) && !strings.HasPrefix(name, "LC_") {
			t.Errorf("task saw %s, which is not on the allowlist", name)
		}
	}
	if strings.Contains(stdout, "canary") {
		t.Errorf("a canary reached the task:\n%s", stdout)
	}
	if seen["JOB_VAR"] != "from-the-job" || seen["CUDA_VISIBLE_DEVICES"] != a.Devices[0] || seen["GPULAYER_TASK_ID"] != a.ID || seen["USER"] != "agent" ||
		seen["GPULAYER_TASK_INDEX"] != "2" || seen["GPULAYER_TASK_COUNT"] != "5" {
		t.Errorf("task variables missing or wrong: %v", seen)
	}
	if home := seen["HOME"]; filepath.Base(home) != a.AttemptID || seen["TMPDIR"] != filepath.Join(home, "tmp") {
		t.Errorf("HOME %q TMPDIR %q, want the task's own directory and its tmp", home, seen["TMPDIR"])
	}
}

// The attack: `cat ../../worker-credential.json` from the task's working
// directory returned the agent's credential. Running as its own uid, the
// task gets EACCES on the agent's 0700 data dir and 0600 credential (in
// a sandbox, on the empty directory that hides the data dir, and on the
// work root, of which it reaches its own directory only); its own
// directory is 0700 and its own, and is removed once it ended.
func TestTaskCannotReadAgentFiles(t *testing.T) {
	rootOnly(t)
	dataDir := t.TempDir()
	r, rec, root := newRunnerWith(t, NewUIDPool(61100, 1), SandboxConfig{Hide: []string{dataDir}})
	if err := os.Chmod(dataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	cred := filepath.Join(dataDir, "worker-credential.json")
	if err := os.WriteFile(cred, []byte(`{"worker_token":"glw_canary"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	a := shellTask(t, `id -u; id -G; stat -c '%a %u' "$HOME"; cat "$1"; ls "$2"; echo end`, nil, cred, root)
	r.Run(t.Context(), a)
	stdout, stderr, ended := rec.out(a.ID)
	if ended != "finish 0" {
		t.Fatalf("ended %q, stderr %q", ended, stderr)
	}
	if want := "61100\n61100\n700 61100\nend\n"; stdout != want {
		t.Errorf("stdout %q, want %q (stderr %q)", stdout, want, stderr)
	}
	if strings.Count(stderr, "Permission denied") != 2 {
		t.Errorf("reading the credential and listing the work root were not both refused: %q", stderr)
	}
	if _, err := os.Stat(filepath.Join(root, a.AttemptID)); !os.IsNotExist(err) {
		t.Errorf("task directory left behind: %v", err)
	}
}

// The attack: a task read a neighbour's secret from /proc/*/environ.
// Two tasks running at once get different uids, and each is refused the
// other's environ while both are alive. Without a sandbox, that is: in
// one, neither even sees the other's processes
// (plugins/exec TestSandboxSeesOnlyItsOwnProcesses).
func TestConcurrentTasksCannotReadEachOther(t *testing.T) {
	rootOnly(t)
	r, rec, _ := newRunnerWith(t, NewUIDPool(61200, 2), SandboxConfig{Disable: true})
	shared := filepath.Join(searchableRoot(t), "rendezvous")
	if err := os.Mkdir(shared, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	// Each task publishes its pid, waits for the other's, tries to read
	// its environ, then waits until the other has tried too, so that
	// both are alive throughout.
	script := `echo $$ > "$1/$2.pid"
while [ ! -e "$1/$3.pid" ]; do sleep 0.01; done
peer=$(cat "$1/$3.pid")
if cat /proc/$peer/environ >/dev/null 2>&1; then echo "read $3's environ"; else echo "refused"; fi
touch "$1/$2.done"
while [ ! -e "$1/$3.done" ]; do sleep 0.01; done
id -u`
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	tasks := []api.Assignment{
		shellTask(t, script, map[string]string{"SECRET": "secret-of-a"}, shared, "a", "b"),
		shellTask(t, script, map[string]string{"SECRET": "secret-of-b"}, shared, "b", "a"),
	}
	var wg sync.WaitGroup
	for _, a := range tasks {
		wg.Go(func() { r.Run(ctx, a) })
	}
	wg.Wait()
	var uids []string
	for _, a := range tasks {
		stdout, stderr, ended := rec.out(a.ID)
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		if ended != "finish 0" || len(lines) != 2 || lines[0] != "refused" {
			t.Fatalf("task %s: ended %q, stdout %q, stderr %q", a.ID, ended, stdout, stderr)
		}
		uids = append(uids, lines[1])
	}
	if uids[0] == uids[1] {
		t.Errorf("both tasks ran as uid %s", uids[0])
	}
}

// A process a task left running (escaped from its process group) would
// share the uid with the next task given it: it is killed before the uid
// is handed out again. That is the clean-up of a task without a sandbox;
// in one, nothing it started outlives it (TestSandboxedTaskLeavesNothing).
func TestLeftoverProcessesKilledBeforeUIDReuse(t *testing.T) {
	rootOnly(t)
	r, rec, _ := newRunnerWith(t, NewUIDPool(61300, 1), SandboxConfig{Disable: true})
	a := shellTask(t, `setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $!`, nil)
	r.Run(t.Context(), a)
	stdout, stderr, ended := rec.out(a.ID)
	pid, err := strconv.Atoi(strings.TrimSpace(stdout))
	if ended != "finish 0" || err != nil {
		t.Fatalf("ended %q, stdout %q, stderr %q", ended, stdout, stderr)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if alive(pid) {
		t.Errorf("process %d of the task's uid still runs after the task ended", pid)
	}
	procs, err := processesOf(61300)
	if err != nil || len(procs) != 0 {
		t.Errorf("processes of uid 61300 left: %v, %v", procs, err)
	}
}

// alive reports whether pid is a live (not zombie) process.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndex(s, ")")
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// The agent's CDI hook names the task's devices and their spec's
// directory in Task.Env, for an executor that runs containers.
func TestCDIHookNamesTheDevicesInTheTaskEnv(t *testing.T) {
	r, rec, _ := newRunner(t, SharedUser{Name: "agent"})
	var asked []string
	r.cfg.CDI = func(a api.Assignment) ([]string, string) {
		asked = a.Devices
		return []string{"gpulayer.io/gpu=" + a.Devices[0]}, "/run/cdi-test"
	}
	a := shellTask(t, `echo "$GPULAYER_CDI_DEVICES $GPULAYER_CDI_DIR"`, nil)
	r.Run(t.Context(), a)
	stdout, stderr, ended := rec.out(a.ID)
	if ended != "finish 0" {
		t.Fatalf("ended %q, stderr %q", ended, stderr)
	}
	if want := "gpulayer.io/gpu=" + a.Devices[0] + " /run/cdi-test\n"; stdout != want || !slices.Equal(asked, a.Devices) {
		t.Errorf("stdout %q, want %q (hook asked for %v)", stdout, want, asked)
	}
}
