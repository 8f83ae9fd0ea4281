package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

func TestSecurityCommandsAgainstDev(t *testing.T) {
	env := startDev(t)
	ok := func(env []string, args ...string) result {
		t.Helper()
		r := run(t, env, args...)
		if r.code != 0 {
			t.Fatalf("gpulayer %s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
		return r
	}
	refused := func(env []string, code string, args ...string) {
		t.Helper()
		r := run(t, env, args...)
		if r.code == 0 || !strings.Contains(r.stderr, code) {
			t.Fatalf("gpulayer %s: exit %d, stderr %q, want %s", strings.Join(args, " "), r.code, r.stderr, code)
		}
	}
	as := func(token string) []string { return []string{env[0], "GPULAYER_TOKEN=" + token} }

	// token create prints the token alone on stdout.
	ci := strings.TrimSpace(ok(env, "token", "create", "--kind", "client", "--name", "ci", "--roles", "submit").stdout)
	if !strings.HasPrefix(ci, "glc_") || strings.Contains(ci, "\n") {
		t.Fatalf("token create printed %q", ci)
	}
	ok(as(ci), "job", "list")
	refused(as(ci), "forbidden", "worker", "list")
	list := ok(env, "token", "list").stdout
	if !strings.Contains(list, "ci") || !strings.Contains(list, "submit") || strings.Contains(list, ci[len(ci)-64:]) {
		t.Fatalf("token list:\n%s", list)
	}
	var created api.CreateTokenResponse
	if err := json.Unmarshal([]byte(ok(env, "token", "create", "--kind", "join", "--name", "gate", "--max-uses", "1", "--requires-approval", "--label", "zone=a", "--json").stdout), &created); err != nil ||
		!strings.HasPrefix(created.Token, "glj_") || created.MaxUses != 1 || !created.RequiresApproval || created.Labels["zone"] != "a" {
		t.Fatalf("join token: %+v %v", created, err)
	}
	if inst := ok(env, "token", "create", "--kind", "instance", "--instance-id", "i-77").stdout; !strings.HasPrefix(inst, "gli_") {
		t.Fatalf("instance token %q", inst)
	}

	// A worker registered with the gated code waits for `worker approve`.
	addr := strings.TrimPrefix(env[0], "GPULAYER_ADDR=")
	req, _ := http.NewRequest("POST", addr+"/v1/workers/register", bytes.NewReader([]byte(`{"worker_id":"gated"}`)))
	req.Header.Set(api.ProtocolHeader, api.ProtocolVersion)
	req.Header.Set("Authorization", "Bearer "+created.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("register with the code: %v %v", resp, err)
	}
	resp.Body.Close()
	if st := ok(env, "worker", "status", "gated", "-o", "json").stdout; !strings.Contains(st, `"pending"`) {
		t.Fatalf("worker status:\n%s", st)
	}
	if out := ok(env, "worker", "approve", "gated").stdout; !strings.Contains(out, "ready") {
		t.Fatalf("approve printed %q", out)
	}
	refused(env, "not_found", "worker", "approve", "ghost")

	ok(env, "token", "revoke", strings.Split(ci, "_")[1])
	refused(as(ci), "unauthenticated", "job", "list")

	// Allowlist enrollment commands.
	ok(env, "enrollment", "cluster", "set", "lab", "--cidrs", "203.0.113.0/24")
	refused(env, "invalid_argument", "enrollment", "add", "vm-far", "--cluster", "lab", "--public-ip", "198.51.100.1")
	ok(env, "enrollment", "add", "vm-1", "--cluster", "lab", "--public-ip", "203.0.113.5")
	if l := ok(env, "enrollment", "list").stdout; !strings.Contains(l, "vm-1") || !strings.Contains(l, "pending") {
		t.Fatalf("enrollment list:\n%s", l)
	}
	if l := ok(env, "enrollment", "cluster", "list").stdout; !strings.Contains(l, "203.0.113.0/24") {
		t.Fatalf("cluster list:\n%s", l)
	}
	ok(env, "enrollment", "revoke", "vm-1")

	// The audit log shows all of it, and never a token. Refused
	// authentications are coalesced and flushed about once a second, so
	// wait for them to land.
	audit := ok(env, "audit")
	for deadline := time.Now().Add(15 * time.Second); !strings.Contains(audit.stdout, "auth.refused") && time.Now().Before(deadline); {
		<-time.After(100 * time.Millisecond) // re-read the log, as an operator would
		audit = ok(env, "audit")
	}
	for _, want := range []string{"token.created", "token.revoked", "worker.approved", "cluster.created", "enrollment.created", "enrollment.revoked", "auth.refused"} {
		if !strings.Contains(audit.stdout, want) {
			t.Errorf("audit lacks %s:\n%s", want, audit.stdout)
		}
	}
	for _, tok := range []string{ci, created.Token} {
		if strings.Contains(audit.stdout, tok[len(tok)-64:]) {
			t.Fatal("the audit output holds a secret")
		}
	}
	lines := strings.Split(strings.TrimSpace(ok(env, "audit", "--kind", "token", "--json").stdout), "\n")
	for _, l := range lines {
		var ev api.AuditEvent
		if err := json.Unmarshal([]byte(l), &ev); err != nil || !strings.HasPrefix(ev.Kind, "token.") {
			t.Fatalf("audit --kind token --json line %q: %v", l, err)
		}
	}
	if len(lines) < 4 {
		t.Fatalf("audit --kind token printed %d events", len(lines))
	}
	refused(env, "--since", "audit", "--since", "last tuesday")
}
