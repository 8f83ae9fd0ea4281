package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
)

// The CLI is tested as people use it: the real binary, built once.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "gpulayer-cli-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "gpulayer")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build gpulayer: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	stdout, stderr string
	code           int
}

func run(t *testing.T, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(os.Environ(), env...)
	return runCmd(t, cmd)
}

// runCmd runs cmd and returns its output and exit code; a command that
// cannot run at all fails the test.
func runCmd(t *testing.T, cmd *exec.Cmd) result {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %v: %v", cmd.Args, err)
	}
	return result{out.String(), errb.String(), code}
}

func TestCoordinatorInitJSON(t *testing.T) {
	dir := t.TempDir()
	r := run(t, nil, "coordinator", "init", "--data-dir", dir, "--json")
	if r.code != 0 {
		t.Fatalf("init: %d %s", r.code, r.stderr)
	}
	var toks map[string]string
	if err := json.Unmarshal([]byte(r.stdout), &toks); err != nil || len(toks) != 2 ||
		!strings.HasPrefix(toks["admin_token"], "glc_") || !strings.HasPrefix(toks["join_token"], "glj_") {
		t.Fatalf("init --json printed %q", r.stdout)
	}
	if again := run(t, nil, "coordinator", "init", "--data-dir", dir); again.code == 0 || !strings.Contains(again.stderr, "--rotate") {
		t.Fatalf("second init: %d %q", again.code, again.stderr)
	}
	if rot := run(t, nil, "coordinator", "init", "--data-dir", dir, "--rotate", "--json"); rot.code != 0 || strings.Contains(rot.stdout, toks["admin_token"]) {
		t.Fatalf("rotate: %d %q", rot.code, rot.stderr)
	}
}

func TestCoordinatorRefusesPlaintextRemote(t *testing.T) {
	dir := t.TempDir()
	run(t, nil, "coordinator", "init", "--data-dir", dir)
	r := run(t, nil, "coordinator", "run", "--data-dir", dir, "--http-addr", "0.0.0.0:0", "--raft-addr", "127.0.0.1:0")
	if r.code == 0 || !strings.Contains(r.stderr, "--allow-insecure-remote") {
		t.Fatalf("plaintext on 0.0.0.0: %d %q", r.code, r.stderr)
	}
}

// lockedBuffer is a bytes.Buffer a child process writes while the test
// reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// process is a running gpulayer binary.
type process struct {
	cmd            *exec.Cmd
	stdout, stderr *lockedBuffer
	exited         <-chan error // yields the exit
}

// startBinary runs the gpulayer binary with args until the test ends,
// when it is sent SIGTERM (after a SIGCONT, should the test have stopped
// it) and must exit cleanly within 30 s.
func startBinary(t *testing.T, args ...string) process {
	t.Helper()
	return startBinaryEnv(t, nil, args...)
}

// startBinaryEnv is startBinary with env added to the test's environment.
func startBinaryEnv(t *testing.T, env []string, args ...string) process {
	t.Helper()
	cmd := exec.Command(binary, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	outb, errb := &lockedBuffer{}, &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = outb, errb
	cmd.WaitDelay = 10 * time.Second // a child left holding the output
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("gpulayer %s exited with %v after SIGTERM\n%s", args[0], err, errb.String())
			}
		case <-time.After(30 * time.Second):
			// SIGQUIT makes the Go runtime write every goroutine to stderr.
			_ = cmd.Process.Signal(syscall.SIGQUIT)
			select {
			case <-exited:
			case <-time.After(5 * time.Second):
				_ = cmd.Process.Kill()
			}
			t.Errorf("gpulayer %s did not stop on SIGTERM\n%s", args[0], errb.String())
		}
	})
	return process{cmd: cmd, stdout: outb, stderr: errb, exited: exited}
}

// startDev runs `gpulayer dev` and returns the client environment.
func startDev(t *testing.T) []string {
	t.Helper()
	return startDevWith(t)
}

// startDevWith runs `gpulayer dev` with extra flags (--plugin-dir, say)
// and returns the client environment.
func startDevWith(t *testing.T, extra ...string) []string {
	t.Helper()
	envFile := filepath.Join(t.TempDir(), "env")
	args := append([]string{"dev", "--http-addr", "127.0.0.1:0", "--env-file", envFile, "--log-level", "warn"}, extra...)
	return waitEnvFile(t, startBinary(t, args...), envFile)
}

// waitEnvFile waits for the env file of the dev p and returns its lines.
func waitEnvFile(t *testing.T, p process, envFile string) []string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		// dev writes the env file, then prints its banner: ready is both.
		if b, err := os.ReadFile(envFile); err == nil && bytes.Count(b, []byte("\n")) == 2 && strings.Contains(p.stdout.String(), "Press Ctrl-C to stop.") {
			return strings.Split(strings.TrimSpace(string(b)), "\n")
		}
		select {
		case err := <-p.exited:
			t.Fatalf("gpulayer dev exited: %v\n%s", err, p.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("gpulayer dev not ready\n%s", p.stderr.String())
		}
	}
}

func TestJobCommandsAgainstDev(t *testing.T) {
	env := startDev(t)

	ok := run(t, env, "job", "submit", "--gpus", "1", "--wait", "--", "sh", "-c", `echo "gpus=$CUDA_VISIBLE_DEVICES"`)
	if ok.code != 0 || !strings.Contains(ok.stdout, "gpus=GPU-") || strings.Contains(ok.stdout, ",") {
		t.Fatalf("1-GPU job: exit %d, stdout %q, stderr %q", ok.code, ok.stdout, ok.stderr)
	}
	bad := run(t, env, "job", "submit", "--wait", "--", "sh", "-c", "echo out; echo err >&2; exit 5")
	if bad.code != 5 || bad.stdout != "out\n" || !strings.Contains(bad.stderr, "err\n") || !strings.Contains(bad.stderr, "exit code 5") {
		t.Fatalf("failing job: exit %d, stdout %q, stderr %q", bad.code, bad.stdout, bad.stderr)
	}
	// A command the node lacks (the README's nvidia-smi on a machine
	// without it): the reason is printed, in the plugin's own words.
	missing := run(t, env, "job", "submit", "--wait", "--", "no-such-command-gpulayer")
	if missing.code == 0 || !strings.Contains(missing.stderr, "no-such-command-gpulayer") || strings.Contains(missing.stderr, "rpc error") {
		t.Fatalf("missing command: exit %d, stderr %q", missing.code, missing.stderr)
	}
	// A timeout says so, not only "exit code 143".
	slow := run(t, env, "job", "submit", "--wait", "--timeout", "1", "--", "sleep", "30")
	if slow.code == 0 || !strings.Contains(slow.stderr, "timed out after 1s (exit code") {
		t.Fatalf("timed-out job: exit %d, stderr %q", slow.code, slow.stderr)
	}

	id := strings.TrimSpace(run(t, env, "job", "submit", "--", "sleep", "60").stdout)
	if !strings.HasPrefix(id, "j") {
		t.Fatalf("submit printed %q", id)
	}
	if c := run(t, env, "job", "cancel", id); c.code != 0 {
		t.Fatalf("cancel: %d %s", c.code, c.stderr)
	}
	// A following log stream ends when the job does.
	if f := run(t, env, "job", "logs", "--follow", id); f.code != 0 {
		t.Fatalf("logs --follow: %d %s", f.code, f.stderr)
	}
	if st := run(t, env, "job", "status", id); !strings.Contains(st.stdout, "state=cancelled") {
		t.Fatalf("job not cancelled:\n%s", st.stdout)
	}

	list := run(t, env, "job", "list")
	if list.code != 0 || !strings.Contains(list.stdout, id) || strings.Count(list.stdout, "\n") != 6 {
		t.Fatalf("job list:\n%s", list.stdout)
	}
	status := run(t, env, "job", "status", "--json", id)
	var job struct {
		CreatedBy string `json:"created_by"`
		Tasks     []struct {
			State string `json:"state"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal([]byte(status.stdout), &job); err != nil || job.CreatedBy != "admin" || job.Tasks[0].State != "cancelled" {
		t.Fatalf("status --json: %v %q", err, status.stdout)
	}
	workers := run(t, env, "worker", "list")
	if !strings.Contains(workers.stdout, "dev-worker") || !strings.Contains(workers.stdout, "8") {
		t.Fatalf("worker list:\n%s", workers.stdout)
	}
	noToken := run(t, []string{env[0], "GPULAYER_TOKEN="}, "job", "list")
	if noToken.code == 0 || !strings.Contains(noToken.stderr, "GPULAYER_TOKEN") {
		t.Fatalf("no token: %d %q", noToken.code, noToken.stderr)
	}
}

// A command against a coordinator that is down says so at once, naming
// the address, instead of retrying for its whole budget (it hung 15 s).
func TestClientCommandsFailFastWhenNoCoordinatorAnswers(t *testing.T) {
	addr := coordinatortest.FreeAddr(t) // nothing listens there
	r := run(t, []string{"GPULAYER_TOKEN=glc_unused"}, "job", "list", "--addr", "http://"+addr)
	if r.code == 0 || !strings.Contains(r.stderr, "no coordinator leader or quorum is reachable") || !strings.Contains(r.stderr, "\n  http://"+addr+": refused the connection") {
		t.Fatalf("job list against a coordinator that is down: exit %d, %q", r.code, r.stderr)
	}
}
