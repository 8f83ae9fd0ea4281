package main

import (
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
