package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// exampleCommands returns the client commands (job and worker, but not
// --watch) of text's sh blocks (of all text unless fenced), continuation
// lines joined, that start with prefix.
func exampleCommands(text, prefix string, fenced bool) []string {
	var cmds []string
	in := !fenced
	var cur string
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if fenced && strings.HasPrefix(line, "```") {
			in = line == "```sh"
			continue
		}
		if !in {
			continue
		}
		if cur != "" || strings.HasPrefix(line, prefix) {
			cur += strings.TrimSuffix(line, `\`) + " "
			if strings.HasSuffix(line, `\`) {
				continue
			}
			words := strings.Fields(strings.TrimPrefix(cur, prefix))
			// A --watch runs until interrupted: not an example to run.
			if len(words) > 0 && (words[0] == "job" || words[0] == "worker") && !slices.Contains(words, "--watch") {
				cmds = append(cmds, strings.TrimSpace(cur))
			}
			cur = ""
		}
	}
	return cmds
}

// The README's example commands, and the root help's, run as written on
// a real dev and its fake GPUs: the first GPU example ran nvidia-smi,
// which the mock GPUs do not serve, and failed.
func TestREADMEExamplesAgainstDev(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	sources := []struct {
		name, prefix string
		cmds         []string
	}{
		{"README.md", "bin/gpulayer ", exampleCommands(string(readme), "bin/gpulayer ", true)},
		{"gpulayer --help", "gpulayer ", exampleCommands(newRootCmd().Example, "gpulayer ", false)},
	}
	env := startDevWith(t, "--fake-gpus", "dgxh100")
	for _, src := range sources {
		gpuExamples := 0
		jobID := ""
		for _, line := range src.cmds {
			line = strings.Replace(line, src.prefix, shellQuote(binary)+" ", 1)
			line = strings.NewReplacer("JOB_ID", jobID, "<job-id>", jobID).Replace(line)
			r := runShell(t, env, line)
			if r.code != 0 {
				t.Errorf("%s: %s\nexit %d\nstdout:\n%s\nstderr:\n%s", src.name, line, r.code, r.stdout, r.stderr)
				continue
			}
			if strings.Contains(line, " submit ") && strings.Contains(line, "--gpus") {
				gpuExamples++
				if !strings.Contains(r.stdout, "GPU-") {
					t.Errorf("%s: %s printed no GPU: %q", src.name, line, r.stdout)
				}
				if jobID == "" {
					jobID = latestJob(t, env)
				}
			}
		}
		if gpuExamples == 0 {
			t.Errorf("%s: no GPU example found among %q", src.name, src.cmds)
		}
	}
}

// runShell runs line with sh, the client environment env added.
func runShell(t *testing.T, env []string, line string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 5 * time.Second // a child left holding the output
	return runCmd(t, cmd)
}

// latestJob is the id of the newest job.
func latestJob(t *testing.T, env []string) string {
	t.Helper()
	r := run(t, env, "job", "list", "--limit", "1", "-o", "json")
	var jobs []api.Job
	if err := json.Unmarshal([]byte(r.stdout), &jobs); err != nil || len(jobs) != 1 {
		t.Fatalf("job list: %v %q", err, r.stdout)
	}
	return jobs[0].ID
}
