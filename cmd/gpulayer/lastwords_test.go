package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// job status shows a failed task's reason and the last lines of its
// output; -o json stays the API's job.
func TestJobStatusShowsTheEndOfAFailedTasksOutput(t *testing.T) {
	env := startDev(t)
	r := run(t, env, "job", "submit", "--max-attempts", "1", "--wait", "--", "sh", "-c", "for i in 1 2 3 4 5 6 7; do echo line$i; done; exit 3")
	if r.code != 3 {
		t.Fatalf("submit --wait: exit %d, want the task's 3\n%s", r.code, r.stderr)
	}
	id := strings.Fields(r.stderr)[1] // "job <id> submitted; …"
	st := run(t, env, "job", "status", id)
	if st.code != 0 {
		t.Fatalf("job status: exit %d\n%s", st.code, st.stderr)
	}
	for _, want := range []string{"exit code 3", "last output of " + id + "-0 (attempt 1):", "    line3\n", "    line7\n"} {
		if !strings.Contains(st.stdout, want) {
			t.Fatalf("job status lacks %q:\n%s", want, st.stdout)
		}
	}
	if strings.Contains(st.stdout, "line2") {
		t.Fatalf("job status shows more than the last lines:\n%s", st.stdout)
	}
	js := run(t, env, "job", "status", id, "-o", "json")
	var job api.Job
	if err := json.Unmarshal([]byte(js.stdout), &job); err != nil || job.ID != id || strings.Contains(js.stdout, "line7") {
		t.Fatalf("-o json: %v\n%s", err, js.stdout)
	}
}

// job logs of a job that wrote nothing says so, and why it failed.
func TestJobLogsOfASilentFailure(t *testing.T) {
	env := startDev(t)
	r := run(t, env, "job", "submit", "--wait", "--", "no-such-command-here")
	if r.code == 0 {
		t.Fatalf("submit --wait of a missing command: exit 0\n%s", r.stderr)
	}
	id := strings.Fields(r.stderr)[1]
	logs := run(t, env, "job", "logs", id)
	if logs.code != 0 || logs.stdout != "" || !strings.Contains(logs.stderr, "has no output") || !strings.Contains(logs.stderr, "executable file not found") {
		t.Fatalf("job logs: exit %d, stdout %q, stderr %q", logs.code, logs.stdout, logs.stderr)
	}
}
