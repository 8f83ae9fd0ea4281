package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Profiles on a real dev: set writes 0600 in a 0700 directory, the current
// profile connects with nothing exported, --profile and GPULAYER_PROFILE
// choose, flags and variables win over the profile, list never shows a
// token, and a file others can read is refused.
func TestProfilesAgainstDev(t *testing.T) {
	dev := startDev(t)
	var addr, token string
	for _, kv := range dev {
		if v, ok := strings.CutPrefix(kv, "GPULAYER_ADDR="); ok {
			addr = v
		}
		if v, ok := strings.CutPrefix(kv, "GPULAYER_TOKEN="); ok {
			token = v
		}
	}
	dir := filepath.Join(t.TempDir(), "gpulayer")
	file := filepath.Join(dir, "config.toml")
	// Nothing exported but where the config is.
	bare := []string{"GPULAYER_ADDR=", "GPULAYER_TOKEN=", "GPULAYER_PROFILE=", cliConfigEnv + "=" + file}
	with := func(extra ...string) []string { return append(append([]string{}, bare...), extra...) }
	expect := func(code int, env []string, args ...string) result {
		t.Helper()
		r := run(t, env, args...)
		if r.code != code {
			t.Fatalf("gpulayer %s: exit %d, want %d\n%s", strings.Join(args, " "), r.code, code, r.stderr)
		}
		if strings.Contains(r.stdout+r.stderr, token) {
			t.Fatalf("gpulayer %s printed the token", strings.Join(args, " "))
		}
		return r
	}
	setToken := func(name string, extra ...string) {
		t.Helper()
		r := runShell(t, bare, "printf '%s\\n' "+token+" | "+binary+" profile set "+name+" "+strings.Join(extra, " ")+" --token-stdin")
		if r.code != 0 {
			t.Fatalf("profile set %s: exit %d\n%s", name, r.code, r.stderr)
		}
	}

	expect(2, bare, "job", "list") // no profile, no token: a usage error
	setToken("dev", "--addr", addr)
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("config: %v, mode %v, want 0600", err, fi.Mode().Perm())
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("config dir: %v, mode %v, want 0700", err, fi.Mode().Perm())
	}
	expect(0, bare, "job", "list") // the first profile is current
	setToken("broken", "--addr", "http://127.0.0.1:1")
	expect(1, bare, "job", "list", "--profile", "broken")
	expect(1, with("GPULAYER_PROFILE=broken"), "job", "list")
	expect(0, bare, "job", "list", "--profile", "broken", "--addr", addr)        // the flag wins
	expect(0, with("GPULAYER_ADDR="+addr), "job", "list", "--profile", "broken") // the variable wins
	expect(1, with("GPULAYER_TOKEN=glc_wrong"), "job", "list")                   // over the token too
	expect(2, bare, "job", "list", "--profile", "ghost")
	expect(0, bare, "profile", "use", "broken")
	expect(1, bare, "worker", "list")
	expect(0, bare, "profile", "use", "dev")
	expect(0, bare, "worker", "list")

	list := expect(0, bare, "profile", "list").stdout
	if !strings.Contains(list, "* ") || !strings.Contains(list, addr) || !strings.Contains(list, "set") {
		t.Errorf("profile list:\n%s", list)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(expect(0, bare, "profile", "list", "-o", "json").stdout), &rows); err != nil || len(rows) != 2 {
		t.Fatalf("profile list -o json: %v %v", err, rows)
	}
	for _, r := range rows {
		if _, ok := r["token"]; ok || r["has_token"] != true {
			t.Errorf("profile list -o json row %v", r)
		}
	}

	// Bad input changes nothing.
	before, _ := os.ReadFile(file)
	expect(2, bare, "profile", "set", "no/such name", "--addr", addr)
	expect(2, bare, "profile", "use", "ghost")
	expect(2, bare, "profile", "delete", "ghost")
	expect(2, bare, "profile", "set", "x", "--token", token)
	if r := runShell(t, bare, "printf '' | "+binary+" profile set x --token-stdin"); r.code != 2 {
		t.Errorf("an empty token: exit %d", r.code)
	}
	if after, _ := os.ReadFile(file); string(after) != string(before) {
		t.Errorf("refused commands changed the config")
	}

	// A config others may read is refused, by every command that reads it.
	if err := os.Chmod(file, 0o640); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"job", "list"}, {"profile", "list"}, {"profile", "use", "dev"}} {
		if r := expect(2, bare, args...); !strings.Contains(r.stderr, "0640") || !strings.Contains(r.stderr, "0600") {
			t.Errorf("gpulayer %s on a 0640 config: %q", strings.Join(args, " "), r.stderr)
		}
	}
	if err := os.Chmod(file, 0o600); err != nil {
		t.Fatal(err)
	}
	expect(0, bare, "profile", "delete", "broken")
	expect(0, bare, "job", "list")
}
