package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/plugins"
)

// `gpulayer plugin NAME` still serves the built-ins exactly as the agent
// starts them, beside `plugin init`.
func TestPluginCommandRouting(t *testing.T) {
	if slices.Contains(plugins.Names(), "init") {
		t.Fatal(`a built-in executor is called "init": "gpulayer plugin init" would never serve it`)
	}
	notCheckout := t.TempDir()
	cases := []struct {
		args   []string
		code   int
		stderr string
	}{
		// The agent's own invocation: go-plugin, started without its
		// handshake, says it is a plugin and exits 1.
		{[]string{"plugin", "exec"}, 1, "This binary is a plugin"},
		{[]string{"plugin", "nosuch"}, 1, `unknown built-in executor "nosuch"`},
		{[]string{"plugin"}, 2, "built-in executor name"},
		{[]string{"plugin", "init"}, 2, "give exactly one plugin name"},
		{[]string{"plugin", "init", "a", "b"}, 2, "give exactly one plugin name"},
		{[]string{"plugin", "init", "Bad_Name"}, 2, "invalid plugin name"},
		{[]string{"plugin", "init", "exec"}, 2, "is a built-in executor"},
		{[]string{"plugin", "init", "demo", "--module", "example.com/a b", "--dir", filepath.Join(t.TempDir(), "d")}, 2, "invalid module path"},
		{[]string{"plugin", "init", "demo", "--sdk", notCheckout, "--dir", filepath.Join(t.TempDir(), "d")}, 2, "is not a gpulayer checkout"},
		{[]string{"plugin", "init", "demo", "--no-such-flag"}, 2, "unknown flag"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := run(t, nil, tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.stderr) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", r.code, r.stderr, tc.code, tc.stderr)
			}
		})
	}
}

// plugin init never writes into a directory that holds anything.
func TestPluginInitRefusesToOverwrite(t *testing.T) {
	cases := []struct {
		what  string
		files []string
	}{
		{"a project already there", []string{"go.mod", "main.go"}},
		{"only a hidden file", []string{".git"}},
	}
	for _, tc := range cases {
		t.Run(tc.what, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, f), []byte("mine\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			r := run(t, nil, "plugin", "init", "demo", "--dir", dir)
			if r.code != 1 || !strings.Contains(r.stderr, "directory is not empty") {
				t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
			}
			entries, err := os.ReadDir(dir)
			if err != nil || len(entries) != len(tc.files) {
				t.Fatalf("directory now holds %v (%v)", entries, err)
			}
			for _, f := range tc.files {
				if b, err := os.ReadFile(filepath.Join(dir, f)); err != nil || string(b) != "mine\n" {
					t.Errorf("%s changed: %q %v", f, b, err)
				}
			}
		})
	}
}

// What docs/plugins.md walks through, from a directory outside the
// repository: plugin init, go mod tidy, vet, the conformance test, a
// build under the loader's file name, and a job through the plugin on a
// dev cluster started with --plugin-dir.
func TestPluginInitOutsideTheRepo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a plugin module with the go command")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	proj := filepath.Join(tmp, "outside")
	r := run(t, nil, "plugin", "init", "demo-exec", "--dir", proj, "--sdk", root)
	if r.code != 0 || !strings.Contains(r.stdout, "go mod tidy") || !strings.Contains(r.stdout, "gpulayer-executor-demo-exec") ||
		!strings.Contains(r.stdout, "builds against the gpulayer checkout in "+root) {
		t.Fatalf("plugin init: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}

	pluginDir := filepath.Join(tmp, "plugins")
	if err := os.Mkdir(pluginDir, 0o755); err != nil {
		t.Fatal(err)
	}
	goCmd(t, proj, "mod", "tidy")
	goCmd(t, proj, "vet", "./...")
	if out := goCmd(t, proj, "test", "-count=1", "-v", "-run", "TestConformance", "./..."); !strings.Contains(out, "--- PASS: TestConformance/grpc") {
		t.Fatalf("executortest did not run over gRPC:\n%s", out)
	}
	goCmd(t, proj, "build", "-o", filepath.Join(pluginDir, "gpulayer-executor-demo-exec"), ".")

	env := startDevWith(t, "--plugin-dir", pluginDir)
	ok := run(t, env, "job", "submit", "--executor", "demo-exec", "--gpus", "1", "--wait",
		"--config", `{"lines":["hello from an outside plugin","gpus=${CUDA_VISIBLE_DEVICES}"]}`)
	if ok.code != 0 || !strings.HasPrefix(ok.stdout, "hello from an outside plugin\ngpus=GPU-") || !strings.Contains(ok.stderr, "succeeded") {
		t.Fatalf("job through the plugin: exit %d\nstdout %q\nstderr %q", ok.code, ok.stdout, ok.stderr)
	}
	failed := run(t, env, "job", "submit", "--executor", "demo-exec", "--wait", "--config", `{"lines":["bye"],"exit_code":3}`)
	if failed.code != 3 || failed.stdout != "bye\n" {
		t.Fatalf("failing job through the plugin: exit %d\nstdout %q\nstderr %q", failed.code, failed.stdout, failed.stderr)
	}
}

// goCmd runs the go command in dir as a plugin author would, with the
// test's build and module caches, and returns its output. The module
// must not reach for this checkout's go.work, nor a newer toolchain.
func goCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
