package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// parsed parses args into cmd's flags and fills the rest from the
// environment and the config file, as running the command would.
func parsed(t *testing.T, cmd *cobra.Command, args ...string) error {
	t.Helper()
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	return applySources(cmd)
}

func flagValue(t *testing.T, cmd *cobra.Command, name string) string {
	t.Helper()
	f := cmd.Flags().Lookup(name)
	if f == nil {
		t.Fatalf("no flag --%s", name)
	}
	return f.Value.String()
}

// The examples in deploy/ load, every key a flag.
func TestExampleConfigsLoad(t *testing.T) {
	cases := []struct {
		file string
		cmd  func() *cobra.Command
		want map[string]string
	}{
		{"coordinator.example.toml", coordinatorRunCmd, map[string]string{
			"data-dir": "/var/lib/gpulayer/c1", "bootstrap-expect": "3", "join": "https://c2.example:7070,https://c3.example:7070",
			"heartbeat-interval": "2s", "log-format": "json", "trusted-proxy-cidrs": "10.0.0.5/32",
			"oidc-issuer": "https://idp.example/realms/gpu", "oidc-map": "[ml-researchers=ml:submit,ml-leads=ml:admin,sre=ops:admin+submit]",
		}},
		{"agent.example.toml", agentRunCmd, map[string]string{
			"coordinator": "https://c1.example:7070,https://c2.example:7070,https://c3.example:7070", "max-tasks": "8",
			"stop-grace": "10s", "capabilities": "*", "plugin-sha256": "map[echo:" + strings.Repeat("0", 64) + "]",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			cmd := tc.cmd()
			for name := range tc.want {
				for _, v := range envNames(name) {
					t.Setenv(v, "")
				}
			}
			if err := parsed(t, cmd, "--config", filepath.Join("..", "..", "deploy", tc.file)); err != nil {
				t.Fatal(err)
			}
			for name, want := range tc.want {
				if got := flagValue(t, cmd, name); got != want {
					t.Errorf("--%s = %q, want %q", name, got, want)
				}
			}
		})
	}
}

// A flag wins over its variable, which wins over the file, which wins
// over the default.
func TestConfigPrecedence(t *testing.T) {
	file := filepath.Join(t.TempDir(), "c.toml")
	if err := os.WriteFile(file, []byte("http-addr = \"file:1\"\nraft-addr = \"file:2\"\nnode-id = \"file\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GPULAYER_HTTP_ADDR", "env:1")
	t.Setenv("GPULAYER_RAFT_ADDR", "env:2")
	t.Setenv("GPULAYER_NODE_ID", "")
	t.Setenv("GPULAYER_DATA_DIR", "")
	cmd := coordinatorRunCmd()
	if err := parsed(t, cmd, "--config", file, "--http-addr", "flag:1"); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"http-addr": "flag:1", // flag > env > file
		"raft-addr": "env:2",  // env > file
		"node-id":   "file",   // file > default
		"data-dir":  "",       // the default
	} {
		if got := flagValue(t, cmd, name); got != want {
			t.Errorf("--%s = %q, want %q", name, got, want)
		}
	}
}

// A key that is no flag of the command is refused, naming the key and
// the file; from the binary, as a usage error.
func TestConfigUnknownKeyRefused(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"typo":   "data-dir = \"/d\"\nhttp-adr = \"x\"\n",
		"nested": "data-dir = \"/d\"\n[tls]\ncert = \"c.pem\"\n",
		"config": "config = \"other.toml\"\n",
	} {
		file := filepath.Join(dir, name+".toml")
		if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		err := parsed(t, coordinatorRunCmd(), "--config", file)
		if !errors.Is(err, errConfig) || !errors.Is(err, errUsage) || !strings.Contains(err.Error(), file) {
			t.Errorf("%s: %v", name, err)
		}
	}
	file := filepath.Join(dir, "typo.toml")
	r := run(t, nil, "agent", "run", "--config", file)
	if r.code != exitUsage || !strings.Contains(r.stderr, `"http-adr"`) || !strings.Contains(r.stderr, file) {
		t.Fatalf("agent run --config with an unknown key: exit %d, %q", r.code, r.stderr)
	}
	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(bad, []byte("max-tasks = \"many\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := run(t, nil, "agent", "run", "--config", bad); r.code != exitUsage || !strings.Contains(r.stderr, "max-tasks") {
		t.Fatalf("agent run --config with a bad value: exit %d, %q", r.code, r.stderr)
	}
}

// A config file that is refused never has a token it holds repeated in
// the error (a log may capture it): one pasted where a key goes, or on a
// line that is not valid TOML.
func TestConfigErrorsNameNoToken(t *testing.T) {
	const token = "glj_0123456789abcdef_secretsecretsecret"
	dir := t.TempDir()
	for name, content := range map[string]string{
		"pasted as a key": token + " = \"x\"\n",
		"unquoted":        "join-token = " + token + "\n",
		"broken":          "join-token = \"" + token + "\" extra\n",
	} {
		file := filepath.Join(dir, name+".toml")
		if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		err := parsed(t, agentRunCmd(), "--config", file)
		if !errors.Is(err, errConfig) || strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "0123456789") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
