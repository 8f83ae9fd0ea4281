package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// job exec against a dev cluster: the remote command's output and exit
// code become the CLI's, -i sends stdin, -t gives a terminal; an unknown
// task is an error (exit 1).
func TestJobExecAgainstDev(t *testing.T) {
	env := startDev(t)
	id := strings.TrimSpace(run(t, env, "job", "submit", "--", "sh", "-c", "echo ready; exec sleep 60").stdout)
	var task string
	deadline := time.Now().Add(30 * time.Second)
	for task == "" {
		var j api.Job
		if err := json.Unmarshal([]byte(run(t, env, "job", "status", id, "--json").stdout), &j); err == nil && len(j.Tasks) == 1 && j.Tasks[0].State == api.TaskRunning {
			task = j.Tasks[0].ID
		}
		if time.Now().After(deadline) {
			t.Fatal("the job's task never ran")
		}
	}
	r := run(t, env, "job", "exec", task, "--", "sh", "-c", "echo out; echo err >&2; exit 4")
	if r.code != 4 || r.stdout != "out\n" || r.stderr != "err\n" {
		t.Fatalf("exec: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "job", "exec", "-i", task, "--", "tr", "a-z", "A-Z")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader("piped\n")
	if r := runCmd(t, cmd); r.code != 0 || r.stdout != "PIPED\n" {
		t.Fatalf("exec -i: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if r := run(t, env, "job", "exec", "-t", task, "--", "tty"); r.code != 0 || !strings.HasPrefix(r.stdout, "/dev/pts/") {
		t.Fatalf("exec -t: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if r := run(t, env, "job", "exec", "jnope-0", "--", "true"); r.code != 1 || !strings.Contains(r.stderr, "not found") {
		t.Fatalf("exec into an unknown task: exit %d, stderr %q", r.code, r.stderr)
	}
}

// The detach key ends stdin where it stands and marks the session
// detached; what precedes it passes.
func TestDetacherStopsAtTheDetachKey(t *testing.T) {
	for _, c := range []struct {
		in       string
		want     string
		detached bool
	}{
		{"ls\r", "ls\r", false},
		{"ab\x1dcd", "ab", true},
		{"\x1d", "", true},
	} {
		d := newDetacher(strings.NewReader(c.in))
		got, err := io.ReadAll(d)
		if err != nil || string(got) != c.want || d.detached() != c.detached {
			t.Errorf("%q: read %q, %v, detached %v; want %q, detached %v", c.in, got, err, d.detached(), c.want, c.detached)
		}
	}
}
