package main

import (
	"errors"
	"github.com/spf13/pflag"
	"os"
	"strings"
	"testing"
)

// The agent drops every GPULAYER_* variable from its own environment once
// the flags are read, so nothing it launches can inherit a token.
func TestScrubAgentEnv(t *testing.T) {
	for _, k := range []string{"GPULAYER_ADMIN_TOKEN", "GPULAYER_JOIN_TOKEN", "GPULAYER_INSTANCE_TOKEN", "GPULAYER_TOKEN", "GPULAYER_CLUSTER_KEY"} {
		t.Setenv(k, "secret-"+k)
	}
	t.Setenv("GL_KEEP", "kept")
	scrubAgentEnv()
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GPULAYER_") {
			t.Errorf("still in the environment: %s", strings.SplitN(kv, "=", 2)[0])
		}
	}
	if os.Getenv("GL_KEEP") != "kept" {
		t.Error("an unrelated variable was dropped")
	}
}

func TestPinFlag(t *testing.T) {
	sum := strings.Repeat("ab", 32)
	var p pinFlag
	if err := p.Set("echo=" + sum); err != nil {
		t.Fatal(err)
	}
	if err := p.Set("echo=" + strings.ToUpper(sum)); err != nil {
		t.Errorf("the same pin twice: %v", err)
	}
	for _, bad := range []string{"echo=" + strings.Repeat("cd", 32), "echo", "echo=12", "Bad.Name=" + sum} {
		if err := p.Set(bad); err == nil {
			t.Errorf("Set(%q) accepted", bad)
		}
	}
	if p["echo"] != sum || len(p) != 1 {
		t.Errorf("pins = %v", p)
	}
}

// A root agent refuses a secret given as a flag, naming the variable to
// use instead; one that is not root, whose tasks can read its memory
// anyway, takes it.
func TestRootAgentRefusesSecretsOnArgv(t *testing.T) {
	cases := []struct {
		args    []string
		euid    int
		wantErr string
	}{
		{[]string{"--join-token", "glj_x"}, 0, "GPULAYER_JOIN_TOKEN"},
		{[]string{"--data-dir", "/d", "--admin-token=glc_x"}, 0, "GPULAYER_ADMIN_TOKEN"},
		{[]string{"--instance-token", "gli_x", "--instance-id", "i-1"}, 0, "GPULAYER_INSTANCE_TOKEN"},
		{[]string{"--data-dir", "/d", "--instance-id", "i-1"}, 0, ""},
		{[]string{"--join-token", "glj_x"}, 1000, ""},
	}
	for _, c := range cases {
		fs := pflag.NewFlagSet("agent run", pflag.ContinueOnError)
		var f agentFlags
		f.register(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		err := refuseSecretsOnArgv(fs, c.euid)
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%v as uid %d: %v", c.args, c.euid, err)
		case c.wantErr != "" && (!errors.Is(err, errSecretOnArgv) || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%v as uid %d: %v, want a refusal naming %s", c.args, c.euid, err, c.wantErr)
		case err != nil && strings.Contains(err.Error(), "glj_x"):
			t.Errorf("the refusal repeats the secret: %v", err)
		}
	}
}
