package main

import (
	"strings"
	"testing"
)

func TestGroupAndTargetCommandsAgainstDev(t *testing.T) {
	env := startDev(t)
	ok := func(args ...string) result {
		t.Helper()
		r := run(t, env, args...)
		if r.code != 0 {
			t.Fatalf("gpulayer %s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
		return r
	}
	refused := func(code string, args ...string) {
		t.Helper()
		r := run(t, env, args...)
		if r.code == 0 || !strings.Contains(r.stderr, code) {
			t.Fatalf("gpulayer %s: exit %d, stderr %q, want %s", strings.Join(args, " "), r.code, r.stderr, code)
		}
	}

	if r := ok("group", "create", "gpus", "worker:dev-worker"); !strings.Contains(r.stdout, "workers=[dev-worker]") {
		t.Fatalf("group create printed %q", r.stdout)
	}
	ok("group", "create", "nested", "group:gpus")
	refused("cycle_detected", "group", "add", "gpus", "group:nested")
	refused("want worker:ID or group:ID", "group", "add", "gpus", "dev-worker")

	r := ok("job", "submit", "--target", "group:nested", "--capability", "render", "--wait", "--", "sh", "-c", "echo targeted")
	if r.stdout != "targeted\n" {
		t.Fatalf("targeted job printed %q", r.stdout)
	}
	id := strings.TrimSpace(ok("job", "submit", "--target", "worker:dev-worker", "--", "true").stdout)
	st := ok("job", "status", id)
	for _, want := range []string{"target=worker:dev-worker", "created_by=admin"} {
		if !strings.Contains(st.stdout, want) {
			t.Fatalf("job status lacks %q:\n%s", want, st.stdout)
		}
	}
	refused("not_found", "job", "submit", "--target", "group:ghost", "--", "true")
	refused("--target", "job", "submit", "--target", "cluster:x", "--", "true")

	list := ok("group", "list")
	if !strings.Contains(list.stdout, "nested") || !strings.Contains(list.stdout, "group:gpus") {
		t.Fatalf("group list:\n%s", list.stdout)
	}
	if w := ok("worker", "list"); !strings.Contains(w.stdout, "gpus,nested") {
		t.Fatalf("worker list lacks the groups:\n%s", w.stdout)
	}
	refused("conflict", "group", "delete", "gpus")
	ok("group", "remove", "nested", "group:gpus")
	ok("group", "delete", "gpus")
	refused("not_found", "group", "list", "gpus")
	refused("not_found", "worker", "reissue", "ghost")
	refused("not_found", "worker", "revoke", "ghost")
}
