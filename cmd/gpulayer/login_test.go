package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/coordinator/oidc"
	"github.com/gpulayer/gpulayer/internal/oidclogin"
	"github.com/gpulayer/gpulayer/internal/oidctest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// loginAs runs gpulayer login and plays the person: it reads the prompt
// from standard error and opens the URL (PKCE) or approves the code at
// the provider's verification page (device flow), as user.
func loginAs(t *testing.T, p *oidctest.Provider, env []string, user string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, append([]string{"login"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var out strings.Builder
	cmd.Stdout = &out
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.LoginAs(user)
	var errText strings.Builder
	var browsed <-chan error
	var visit string
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		line := sc.Text()
		errText.WriteString(line + "\n")
		trimmed := strings.TrimSpace(line)
		switch {
		case browsed != nil:
		case strings.HasPrefix(trimmed, p.Issuer+"/") && !strings.Contains(trimmed, " "):
			browsed = oidctest.Browse(trimmed) // the PKCE authorization URL
		case strings.HasPrefix(trimmed, "Visit:"):
			visit = strings.TrimSpace(strings.TrimPrefix(trimmed, "Visit:"))
		case strings.HasPrefix(trimmed, "Code:"):
			browsed = oidctest.ApproveDevice(oidclogin.DevicePrompt{VerificationURI: visit, UserCode: strings.TrimSpace(strings.TrimPrefix(trimmed, "Code:"))})
		}
	}
	code := 0
	if err := cmd.Wait(); err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	if browsed != nil {
		if err := <-browsed; err != nil && code == 0 {
			t.Fatalf("browser: %v", err)
		}
	}
	return result{out.String(), errText.String(), code}
}

// TestLoginFlowsStoreTokenInProfile: gpulayer login against a coordinator
// with single sign-on and an in-process provider, with no browser: the
// code flow with PKCE on a loopback redirect and the device flow each
// save a client token in a 0600 profile; the token reads, and is refused
// on an admin route unless the mapping gave admin; a second login reuses
// the profile's issuer and client id.
func TestLoginFlowsStoreTokenInProfile(t *testing.T) {
	p := oidctest.Start(t, jose.RS256)
	p.SetGroups("alice", "ml")
	p.SetGroups("bob", "ops")
	p.SetGroups("carol", "finance")
	h := coordinatortest.Start(t, coordinatortest.Options{Tweak: func(c *coordinator.Config) {
		c.OIDC = oidc.Config{Issuer: p.Issuer, Audience: oidctest.ClientID, Mappings: []oidc.Mapping{
			{Value: "ml", Team: "ml", Roles: []string{"read"}},
			{Value: "ops", Team: "ops", Roles: []string{"admin"}},
		}}
	}})
	for _, team := range []string{"ml", "ops"} { // the teams the mappings name
		if _, err := h.Client(t, h.AdminToken).CreateTeam(t.Context(), api.CreateTeamRequest{Name: team}); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(t.TempDir(), "gpulayer")
	file := filepath.Join(dir, "config.toml")
	env := []string{"GPULAYER_ADDR=", "GPULAYER_TOKEN=", "GPULAYER_PROFILE=", cliConfigEnv + "=" + file}
	flags := []string{"--addr", h.URL, "--issuer", p.Issuer, "--client-id", oidctest.ClientID}

	r := loginAs(t, p, env, "alice", append([]string{"--profile", "ml"}, flags...)...)
	if r.code != 0 || !strings.Contains(r.stdout, "logged in as alice: team ml, roles read") {
		t.Fatalf("PKCE login: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("config: %v %v, want mode 0600", err, fi)
	}
	if strings.Contains(r.stdout+r.stderr, "glc_") {
		t.Fatal("login printed the client token")
	}
	if got := run(t, env, "job", "list", "--profile", "ml"); got.code != 0 {
		t.Fatalf("job list with the SSO token: %d %s", got.code, got.stderr)
	}
	if got := run(t, env, "worker", "list", "--profile", "ml"); got.code == 0 || !strings.Contains(got.stderr, "forbidden") {
		t.Fatalf("worker list with a read SSO token: %d %s", got.code, got.stderr)
	}

	r = loginAs(t, p, env, "bob", append([]string{"--device", "--profile", "ops"}, flags...)...)
	if r.code != 0 || !strings.Contains(r.stdout, "logged in as bob: team ops, roles admin") || !strings.Contains(r.stderr, "Code:") {
		t.Fatalf("device login: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := run(t, env, "worker", "list", "--profile", "ops"); got.code != 0 {
		t.Fatalf("worker list with an admin SSO token: %d %s", got.code, got.stderr)
	}

	// Again, with only the profile: its address, issuer and client id.
	if r = loginAs(t, p, env, "alice", "--profile", "ml"); r.code != 0 {
		t.Fatalf("login from the profile alone: exit %d\n%s", r.code, r.stderr)
	}
	// An unmapped person is told so, and nothing is saved for them.
	r = loginAs(t, p, env, "carol", append([]string{"--profile", "finance"}, flags...)...)
	if r.code == 0 || !strings.Contains(r.stderr, "maps to no team") {
		t.Fatalf("unmapped login: exit %d\n%s", r.code, r.stderr)
	}
	if got := run(t, env, "profile", "list"); strings.Contains(got.stdout, "finance") {
		t.Fatalf("a refused login saved a profile:\n%s", got.stdout)
	}
}

// TestLoginNeedsIssuerAndClientID: with neither flags nor a profile that
// holds them, login is a usage error before any network call.
func TestLoginNeedsIssuerAndClientID(t *testing.T) {
	file := filepath.Join(t.TempDir(), "config.toml")
	r := run(t, []string{cliConfigEnv + "=" + file, "GPULAYER_PROFILE="}, "login")
	if r.code != 2 || !strings.Contains(r.stderr, "--issuer and --client-id") {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
}

// TestCoordinatorOIDCConfigKeys: the --oidc-* flags are read from the
// config file too, and a bad mapping there stops the start with the
// reason.
func TestCoordinatorOIDCConfigKeys(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "c.toml")
	body := "data-dir = \"" + dir + "\"\noidc-issuer = \"https://idp.example\"\noidc-audience = \"gpulayer-cli\"\noidc-map = [\"ml=ml:read\", \"ops=ops:owner\"]\n"
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	r := run(t, nil, "coordinator", "run", "--config", conf)
	if r.code == 0 || !strings.Contains(r.stderr, `unknown role "owner"`) {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
}
