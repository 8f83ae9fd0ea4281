package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// The team commands against a real coordinator: create with settings,
// a token of the team, a job it submits counted in the team's figures,
// update, and delete refused while the job waits.
func TestTeamCommands(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	env := []string{"GPULAYER_ADDR=" + h.URL, "GPULAYER_TOKEN=" + h.AdminToken}
	ok := func(env []string, args ...string) string {
		t.Helper()
		r := run(t, env, args...)
		if r.code != 0 {
			t.Fatalf("gpulayer %s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
		return r.stdout
	}
	if out := ok(env, "team", "create", "vision", "--quota", "8", "--borrow-limit", "2.5", "--weight", "2"); !strings.Contains(out, "team vision  weight=2  quota=8  borrow_limit=2.5") {
		t.Fatalf("create: %q", out)
	}
	token := strings.TrimSpace(ok(env, "token", "create", "--name", "alice", "--roles", "submit", "--team", "vision"))
	alice := []string{"GPULAYER_ADDR=" + h.URL, "GPULAYER_TOKEN=" + token}
	ok(alice, "job", "submit", "--", "true")
	var teams []api.Team
	if err := json.Unmarshal([]byte(ok(alice, "team", "list", "-o", "json")), &teams); err != nil {
		t.Fatal(err)
	}
	if len(teams) != 1 || teams[0].Name != "vision" || teams[0].Usage.PendingTasks != 1 {
		t.Fatalf("alice's teams: %+v", teams)
	}
	table := ok(env, "team", "list")
	for _, want := range []string{"TEAM", "BORROW LIMIT", "default", "vision"} {
		if !strings.Contains(table, want) {
			t.Errorf("team list lacks %q:\n%s", want, table)
		}
	}
	if out := ok(env, "team", "update", "vision", "--no-borrow-limit", "--quota", "4"); !strings.Contains(out, "quota=4  borrow_limit=none") {
		t.Errorf("update: %q", out)
	}
	// The artifact quota is set alone (the GPU quota stays), then lifted.
	if out := ok(env, "team", "update", "vision", "--artifact-quota-bytes", "5000"); !strings.Contains(out, "quota=4  ") || !strings.Contains(out, "artifact_bytes=0  artifact_quota=5000") {
		t.Errorf("update the artifact quota: %q", out)
	}
	for _, want := range []string{"ARTIFACT QUOTA", "5000"} {
		if table := ok(env, "team", "list"); !strings.Contains(table, want) {
			t.Errorf("team list lacks %q:\n%s", want, table)
		}
	}
	if out := ok(env, "team", "update", "vision", "--no-artifact-quota"); !strings.Contains(out, "quota=4  ") || !strings.Contains(out, "artifact_quota=none") {
		t.Errorf("lift the artifact quota: %q", out)
	}
	if r := run(t, env, "team", "delete", "vision"); r.code == 0 || !strings.Contains(r.stderr, "unfinished") {
		t.Errorf("delete with a job waiting: exit %d %s", r.code, r.stderr)
	}
}
