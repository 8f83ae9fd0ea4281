package main

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// Every command whose first argument is a job or worker id completes it.
func TestEveryIDArgumentCompletes(t *testing.T) {
	var walk func(*cobra.Command)
	found := map[string]int{}
	walk = func(c *cobra.Command) {
		for _, w := range strings.Fields(c.Use) {
			if (w == "JOB" || w == "WORKER") && c.ValidArgsFunction == nil {
				t.Errorf("%s takes %s but does not complete it", c.CommandPath(), w)
			}
		}
		if k := idKind(c); k != "" {
			found[k]++
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd())
	if found["JOB"] < 4 || found["WORKER"] < 6 {
		t.Errorf("commands completing ids: %v", found)
	}
}

// On a real dev, `gpulayer __complete` (what the shell scripts call)
// lists job and worker ids, --target's workers and --task's tasks,
// filtered by what is typed; a coordinator that
// does not answer completes nothing, quickly and without an error.
func TestCompletionOfIDsAgainstDev(t *testing.T) {
	env := startDev(t)
	id := strings.TrimSpace(run(t, env, "job", "submit", "--name", "evil\x1b[2Jname", "--", "true").stdout)
	complete := func(env []string, args ...string) []string {
		t.Helper()
		r := run(t, env, append([]string{"__complete"}, args...)...)
		if r.code != 0 {
			t.Fatalf("__complete %v: exit %d\n%s", args, r.code, r.stderr)
		}
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		if last := lines[len(lines)-1]; last != ":4" { // no file completion
			t.Fatalf("__complete %v ended with %q", args, last)
		}
		return lines[:len(lines)-1]
	}
	tests := []struct {
		args []string
		want string // a completion starts with this, or none when ""
	}{
		{[]string{"job", "status", ""}, id + "\t"},
		{[]string{"job", "logs", id[:3]}, id + "\t"},
		{[]string{"job", "cancel", "zzz"}, ""},
		{[]string{"job", "status", id, ""}, ""}, // the second argument
		{[]string{"worker", "status", ""}, "dev-worker\tready"},
		{[]string{"worker", "drain", "dev"}, "dev-worker\t"},
		{[]string{"worker", "approve-gpus", "x"}, ""},
		{[]string{"job", "submit", "--target", "wor"}, "worker:dev-worker\t"},
		{[]string{"job", "submit", "--target", "group:"}, ""}, // no group yet
		{[]string{"job", "logs", id, "--task", ""}, "0\t" + id + "-0 "},
	}
	for _, tc := range tests {
		got := complete(env, tc.args...)
		ok := tc.want == "" && len(got) == 0
		for _, g := range got {
			ok = ok || (tc.want != "" && strings.HasPrefix(g, tc.want))
			if strings.ContainsRune(g, '\x1b') {
				t.Errorf("__complete %q let a control character through: %q", tc.args, g)
			}
		}
		if !ok {
			t.Errorf("__complete %q = %q, want one starting %q", tc.args, got, tc.want)
		}
	}
	start := time.Now()
	if got := complete(append(env, "GPULAYER_ADDR=http://127.0.0.1:1"), "job", "status", ""); len(got) != 0 || time.Since(start) > 10*time.Second {
		t.Errorf("no coordinator: %q after %v", got, time.Since(start))
	}
	if got := complete(append(env, "GPULAYER_TOKEN=glc_wrong"), "worker", "status", ""); len(got) != 0 {
		t.Errorf("a refused token: %q", got)
	}
}
