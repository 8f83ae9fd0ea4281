package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// The read commands' formats, --watch, flags after arguments and -- on a
// running dev cluster.
func TestCLIConventionsAgainstDev(t *testing.T) {
	env := startDev(t)
	ok := func(args ...string) result {
		t.Helper()
		r := run(t, env, args...)
		if r.code != 0 {
			t.Fatalf("gpulayer %s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
		return r
	}

	// -- ends gpulayer's flags: what follows is the task's, --wait included.
	if r := ok("job", "submit", "--wait", "--", "sh", "-c", `echo "$@"`, "sh", "hi", "--wait"); r.stdout != "hi --wait\n" {
		t.Fatalf("after --: stdout %q", r.stdout)
	}
	// Without --, a flag after the command's words is gpulayer's.
	if r := ok("job", "submit", "echo", "hi", "--wait"); r.stdout != "hi\n" || !strings.Contains(r.stderr, "succeeded") {
		t.Fatalf("--wait after the words: stdout %q, stderr %q", r.stdout, r.stderr)
	}
	id := strings.TrimSpace(ok("job", "submit", "--", "true").stdout)

	// Flags after positional arguments.
	var job api.Job
	if err := json.Unmarshal([]byte(ok("job", "status", id, "--json").stdout), &job); err != nil || job.ID != id {
		t.Fatalf("job status ID --json: %v %+v", err, job)
	}
	addr := strings.TrimPrefix(env[0], "GPULAYER_ADDR=")
	snap := filepath.Join(t.TempDir(), "backup.snap")
	ok("operator", "snapshot", "save", snap, "--addr", addr)
	if st, err := os.Stat(snap); err != nil || st.Size() == 0 {
		t.Fatalf("snapshot save FILE --addr: %v", err)
	}

	// -o table|wide|json on every read command; --json is -o json.
	reads := [][]string{
		{"job", "list"}, {"job", "status", id}, {"worker", "list"}, {"worker", "status", "dev-worker"},
		{"token", "list"}, {"group", "list"}, {"enrollment", "list"}, {"enrollment", "cluster", "list"},
		{"operator", "raft", "list-peers"},
	}
	for _, args := range reads {
		table := ok(args...).stdout
		wide := ok(append(args, "-o", "wide")...).stdout
		asJSON := ok(append(args, "-o", "json")...).stdout
		if !json.Valid([]byte(asJSON)) || strings.HasPrefix(table, "{") || strings.HasPrefix(table, "[") || len(wide) < len(table) {
			t.Errorf("gpulayer %s:\ntable:\n%s\nwide:\n%s\njson:\n%s", strings.Join(args, " "), table, wide, asJSON)
		}
		if legacy := ok(append(args, "--json")...).stdout; !json.Valid([]byte(legacy)) {
			t.Errorf("gpulayer %s --json: %q", strings.Join(args, " "), legacy)
		}
	}
	workers := ok("worker", "list").stdout
	if !strings.Contains(workers, "LAST HEARTBEAT") || !strings.Contains(workers, " ago") || !execColumn.MatchString(workers) || strings.Contains(workers, "[exec]") {
		t.Errorf("worker list:\n%s", workers)
	}
	if st := ok("worker", "status", "dev-worker").stdout; !strings.Contains(st, "status:") || !strings.Contains(st, "ready") || !strings.Contains(st, "GPU-") {
		t.Errorf("worker status:\n%s", st)
	}

	// audit --limit N: the newest N, oldest of them first.
	for _, name := range []string{"cli-a", "cli-b"} {
		ok("token", "create", "--name", name)
	}
	all := strings.Split(strings.TrimSpace(ok("audit", "-o", "json").stdout), "\n")
	last := strings.Split(strings.TrimSpace(ok("audit", "--limit", "2", "-o", "json").stdout), "\n")
	seq := func(line string) uint64 {
		var ev api.AuditEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		return ev.Seq
	}
	if len(all) < 3 || len(last) != 2 || seq(last[0]) >= seq(last[1]) || seq(last[0]) < seq(all[len(all)-2]) {
		t.Fatalf("audit --limit 2 printed\n%s\nof\n%s", strings.Join(last, "\n"), strings.Join(all, "\n"))
	}

	if st := ok("worker", "status", "dev-worker").stdout; !strings.Contains(st, "HEALTH") {
		t.Errorf("worker status shows no GPU health:\n%s", st)
	}

	// operator gc removes finished jobs; they answer not found after.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var j api.Job
		if err := json.Unmarshal([]byte(ok("job", "status", id, "-o", "json").stdout), &j); err == nil && j.State == api.TaskSucceeded {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s did not finish", id)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if r := ok("operator", "gc", "--older-than", "0s"); !strings.Contains(r.stdout, "finished jobs removed") || strings.HasPrefix(r.stdout, "0 ") {
		t.Fatalf("operator gc: %q", r.stdout)
	}
	if r := run(t, env, "job", "status", id); r.code == 0 || !strings.Contains(r.stderr, "not_found") {
		t.Fatalf("job status of a collected job: exit %d, %q", r.code, r.stderr)
	}
	id = strings.TrimSpace(ok("job", "submit", "--", "true").stdout)

	// --watch with -o json: a document a refresh until interrupted.
	for _, args := range [][]string{{"job", "list"}, {"job", "status", id}, {"worker", "list"}} {
		w := startLines(t, env, append(args, "--watch", "--watch-interval", "50ms", "-o", "json")...)
		for range 2 {
			if l := w.next(t); !json.Valid([]byte(l)) {
				t.Fatalf("%s --watch -o json printed %q", strings.Join(args, " "), l)
			}
		}
		w.stop(t)
	}
}

// execColumn finds exec in a worker list's executors column, alone or in
// a comma list (container is built in too where Docker answers).
var execColumn = regexp.MustCompile(`[ ,]exec[ ,]`)
