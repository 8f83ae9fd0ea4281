package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// A job no live worker can take says why: job status shows it in the
// task's reason column, and submit --wait says it while it waits.
func TestJobSaysWhyItWaits(t *testing.T) {
	env := startDev(t)
	const why = `no live worker offers executor "nope"`
	r := run(t, env, "job", "submit", "--executor", "nope", "--", "true")
	if r.code != 0 {
		t.Fatalf("submit: exit %d\n%s", r.code, r.stderr)
	}
	id := strings.TrimSpace(r.stdout)
	if st := run(t, env, "job", "status", id); st.code != 0 || !strings.Contains(st.stdout, "waits: "+why) {
		t.Fatalf("job status: exit %d\n%s%s", st.code, st.stdout, st.stderr)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "job", "submit", "--executor", "nope", "--wait", "--", "true")
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := bufio.NewScanner(stderr)
	var seen []string
	for lines.Scan() {
		seen = append(seen, lines.Text())
		if strings.Contains(lines.Text(), "waits: "+why) {
			return
		}
	}
	t.Fatalf("submit --wait never said why the job waits:\n%s", strings.Join(seen, "\n"))
}
