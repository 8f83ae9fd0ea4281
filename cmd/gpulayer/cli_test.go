package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
)

// A command line the CLI cannot run exits 2 with one line saying why and
// a hint to --help, on stderr, and nothing on stdout.
func TestUsageErrorsExit2(t *testing.T) {
	tok := []string{"GPULAYER_TOKEN=glc_unused", "GPULAYER_ADDR=http://" + coordinatortest.FreeAddr(t)}
	cases := []struct {
		name string
		env  []string
		args []string
		want string // in the error line
		hint string // the command the hint names
	}{
		{"no command", nil, nil, "needs a command", "gpulayer"},
		{"group without command", nil, []string{"job"}, "needs a command", "gpulayer job"},
		{"unknown command", nil, []string{"frobnicate"}, `unknown command "frobnicate"`, "gpulayer"},
		{"unknown subcommand", nil, []string{"job", "frobnicate"}, `unknown command "frobnicate"`, "gpulayer job"},
		{"unknown flag", tok, []string{"job", "list", "--bogus"}, "unknown flag: --bogus", "gpulayer job list"},
		{"missing argument", tok, []string{"job", "status"}, "give exactly one job id", "gpulayer job status"},
		{"extra argument", tok, []string{"job", "status", "a", "b"}, "give exactly one job id", "gpulayer job status"},
		{"bad -o", tok, []string{"worker", "list", "-o", "yaml"}, "want table, wide or json", "gpulayer worker list"},
		{"bad int", tok, []string{"job", "list", "--limit", "many"}, "--limit", "gpulayer job list"},
		{"bad env value", append([]string{"GPULAYER_LIMIT=many"}, tok...), []string{"job", "list"}, "GPULAYER_LIMIT", "gpulayer job list"},
		{"unknown shell", nil, []string{"completion", "tcsh"}, "tcsh", "gpulayer completion"},
		{"nothing to run", tok, []string{"job", "submit", "--gpus", "1"}, "nothing to run", "gpulayer job submit"},
		// Words after the command are gpulayer's flags unless after --.
		{"command's flag without --", tok, []string{"job", "submit", "python", "train.py", "--epochs", "3"}, "put the command after --", "gpulayer job submit"},
		{"no token", []string{"GPULAYER_TOKEN="}, []string{"job", "list"}, "GPULAYER_TOKEN", "gpulayer job list"},
		{"bad --since", tok, []string{"audit", "--since", "last tuesday"}, "--since", "gpulayer audit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, tc.env, tc.args...)
			lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
			if r.code != exitUsage || r.stdout != "" || len(lines) != 2 ||
				!strings.HasPrefix(lines[0], "gpulayer: ") || !strings.Contains(lines[0], tc.want) ||
				lines[1] != "Run '"+tc.hint+" --help' for usage." {
				t.Fatalf("gpulayer %q: exit %d, stdout %q, stderr %q; want exit 2, %q and a hint to %s --help", tc.args, r.code, r.stdout, r.stderr, tc.want, tc.hint)
			}
		})
	}
}

// --help prints the synopsis and examples on stdout.
func TestHelpOnStdout(t *testing.T) {
	for _, args := range [][]string{
		{"--help"}, {"job", "submit", "--help"}, {"job", "list", "-h"}, {"help", "worker", "status"},
		{"coordinator", "run", "--help"}, {"agent", "run", "--help"}, {"operator", "snapshot", "save", "--help"},
	} {
		r := run(t, nil, args...)
		if r.code != 0 || r.stderr != "" || !strings.Contains(r.stdout, "Usage:") || !strings.Contains(r.stdout, "Examples:") {
			t.Errorf("gpulayer %q: exit %d, stderr %q, stdout:\n%s", args, r.code, r.stderr, r.stdout)
		}
	}
	if r := run(t, nil, "job", "submit", "--help"); !strings.Contains(r.stdout, "[$GPULAYER_GPUS]") || !strings.Contains(r.stdout, "[--] COMMAND") {
		t.Errorf("job submit --help names neither the variables nor --:\n%s", r.stdout)
	}
}

// Every command people run says what it does and shows an example.
func TestEveryCommandHasAnExample(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden {
			return
		}
		if c.Short == "" || c.Example == "" {
			t.Errorf("%q: Short %q, Example %q", c.CommandPath(), c.Short, c.Example)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd())
}

func TestVersion(t *testing.T) {
	r := run(t, nil, "version")
	if r.code != 0 || !strings.Contains(r.stdout, "dev") || !strings.Contains(r.stdout, "commit:") || !strings.Contains(r.stdout, runtime.Version()) {
		t.Fatalf("version: exit %d, %q", r.code, r.stdout)
	}
	var v buildVersion
	if r := run(t, nil, "version", "-o", "json"); json.Unmarshal([]byte(r.stdout), &v) != nil || v.Version != "dev" || v.Go != runtime.Version() || v.Commit == "" {
		t.Fatalf("version -o json: %q", r.stdout)
	}
}

func TestCompletionScripts(t *testing.T) {
	for shell, marker := range map[string]string{"bash": "__start_gpulayer", "zsh": "#compdef gpulayer", "fish": "complete -c gpulayer"} {
		r := run(t, nil, "completion", shell)
		if r.code != 0 || !strings.Contains(r.stdout, marker) {
			t.Errorf("completion %s: exit %d, %d bytes, no %q; stderr %q", shell, r.code, len(r.stdout), marker, r.stderr)
		}
	}
}

// Every flag also comes from GPULAYER_<FLAG>; the command line wins.
func TestFlagsFromEnvironment(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "c1")
	r := run(t, []string{"GPULAYER_DATA_DIR=" + dir}, "coordinator", "init", "--json")
	if r.code != 0 {
		t.Fatalf("init with GPULAYER_DATA_DIR: exit %d %s", r.code, r.stderr)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("GPULAYER_DATA_DIR was not used: %v", err)
	}
	envAddr, flagAddr := "http://"+coordinatortest.FreeAddr(t), "http://"+coordinatortest.FreeAddr(t)
	env := []string{"GPULAYER_TOKEN=glc_unused", "GPULAYER_ADDR=" + envAddr}
	if r := run(t, env, "job", "list"); !strings.Contains(r.stderr, envAddr) {
		t.Errorf("GPULAYER_ADDR unused: %q", r.stderr)
	}
	if r := run(t, env, "job", "list", "--addr", flagAddr); !strings.Contains(r.stderr, flagAddr) || strings.Contains(r.stderr, envAddr) {
		t.Errorf("--addr did not win over GPULAYER_ADDR: %q", r.stderr)
	}
	// GPULAYER_CONFIG names coordinator and agent config files, not job
	// submit's executor config.
	if r := run(t, append(env, "GPULAYER_CONFIG=/etc/gpulayer/agent.toml"), "job", "submit", "--", "true"); strings.Contains(r.stderr, "--config") || !strings.Contains(r.stderr, envAddr) {
		t.Errorf("job submit took GPULAYER_CONFIG: %q", r.stderr)
	}
	if r := run(t, env, "job", "list"); strings.Contains(r.stderr, "glc_unused") {
		t.Errorf("an error repeats the token: %q", r.stderr)
	}
}

// lineReader runs the binary and hands its stdout over line by line.
type lineReader struct {
	cmd   *exec.Cmd
	lines chan string
	done  chan error
}

func startLines(t *testing.T, env []string, args ...string) *lineReader {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lr := &lineReader{cmd: cmd, lines: make(chan string, 100), done: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lr.lines <- sc.Text()
		}
		close(lr.lines)
		lr.done <- cmd.Wait()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return lr
}

// next returns the next line, failing the test after 30 s.
func (lr *lineReader) next(t *testing.T) string {
	t.Helper()
	select {
	case l, ok := <-lr.lines:
		if !ok {
			t.Fatal("the command ended early")
		}
		return l
	case <-time.After(30 * time.Second):
		t.Fatal("no output within 30 s")
	}
	return ""
}

// stop interrupts the command and wants it to exit 0.
func (lr *lineReader) stop(t *testing.T) {
	t.Helper()
	if err := lr.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for range lr.lines {
	}
	select {
	case err := <-lr.done:
		if err != nil {
			t.Fatalf("interrupted watch: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the watch did not stop on SIGINT")
	}
}
