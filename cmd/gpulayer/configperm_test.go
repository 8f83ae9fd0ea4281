//go:build unix

package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A config file that holds a secret (a join, admin or instance token) is
// refused unless only its owner can read it, as ssh refuses a private
// key: a root agent read its tokens from a world-readable file, and a
// task read them too (finding 4 of the third review). A file without a
// secret may stay readable.
func TestConfigWithSecretMustBePrivate(t *testing.T) {
	cases := []struct {
		name    string
		content string
		mode    os.FileMode
		want    string // "" when accepted
	}{
		{"secret, world-readable", "join-token = \"gpl_join_x\"\n", 0o644, "holds a secret (join-token) and is mode 0644: make it 0600"},
		{"secret, group-readable", "admin-token = \"gpl_x\"\n", 0o640, "holds a secret (admin-token) and is mode 0640"},
		{"secret, group-writable", "instance-token = \"gpl_x\"\n", 0o620, "holds a secret (instance-token) and is mode 0620"},
		{"secret, private", "join-token = \"gpl_join_x\"\n", 0o600, ""},
		{"secret, owner read-only", "join-token = \"gpl_join_x\"\n", 0o400, ""},
		{"no secret, world-readable", "max-tasks = 4\n", 0o644, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, v := range []string{"GPULAYER_JOIN_TOKEN", "GPULAYER_ADMIN_TOKEN", "GPULAYER_INSTANCE_TOKEN", "GPULAYER_MAX_TASKS"} {
				t.Setenv(v, "")
			}
			file := filepath.Join(t.TempDir(), "agent.toml")
			if err := os.WriteFile(file, []byte(c.content), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(file, c.mode); err != nil {
				t.Fatal(err)
			}
			err := parsed(t, agentRunCmd(), "--config", file)
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !errors.Is(err, errConfigSecret) || !strings.Contains(err.Error(), "config "+file+" "+c.want) {
				t.Fatalf("got %v, want an error naming %q", err, c.want)
			}
			if strings.Contains(err.Error(), "gpl_") {
				t.Fatalf("the error quotes the secret: %v", err)
			}
		})
	}
}
