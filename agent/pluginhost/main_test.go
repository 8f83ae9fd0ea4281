package pluginhost_test

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/gpulayer/gpulayer/agent/pluginhost"
	"github.com/gpulayer/gpulayer/plugins"
)

// serveArg makes the test binary serve a built-in executor, standing in
// for `gpulayer plugin <name>`.
const serveArg = "__pluginhost_test_serve__"

func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == serveArg {
		if err := plugins.ServeBuiltin(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if len(os.Args) == 3 && os.Args[1] == agentArg {
		os.Exit(serveAgent(os.Args[2]))
	}
	dir, err := os.MkdirTemp("", "pluginhost-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pluginDir = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

var (
	pluginDir string // shared plugin directory, built once
	buildOnce sync.Once
	buildErr  error
)

// buildPlugins builds the example echo plugin and the crash test plugin
// into the shared plugin directory and returns it.
func buildPlugins(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		out := filepath.Join(pluginDir, "build")
		cmd := exec.Command("go", "build", "-o", out+string(filepath.Separator),
			"github.com/gpulayer/gpulayer/examples/plugins/echo",
			"github.com/gpulayer/gpulayer/agent/pluginhost/testdata/crashplugin")
		if b, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, b)
			return
		}
		for bin, name := range map[string]string{"echo": "echo", "crashplugin": "crash"} {
			dst := filepath.Join(pluginDir, pluginhost.BinaryPrefix+name)
			if err := os.Rename(filepath.Join(out, bin), dst); err != nil {
				buildErr = err
				return
			}
			// Whatever the umask: a group-writable plugin is refused.
			if err := os.Chmod(dst, 0o755); err != nil {
				buildErr = err
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return pluginDir
}

// newHost returns a host whose built-ins re-execute this test binary and
// whose plugin directory is dir; it is closed when the test ends.
func newHost(t *testing.T, dir string) *pluginhost.Host {
	t.Helper()
	return newHostWith(t, dir, nil)
}

// newHostWith is newHost telling events of plugin starts and crashes.
func newHostWith(t *testing.T, dir string, events pluginhost.Events) *pluginhost.Host {
	t.Helper()
	logs := &testWriter{t: t}
	t.Cleanup(logs.close) // runs after the host's Close below
	h, err := pluginhost.New(pluginhost.Config{
		Logger:    slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		SelfExe:   os.Args[0],
		SelfArgs:  func(name string) []string { return []string{serveArg, name} },
		PluginDir: dir,
		Events:    events,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// testWriter sends logs to the test's output until the test ends.
type testWriter struct {
	mu   sync.Mutex
	t    *testing.T
	done bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return io.Discard.Write(p)
	}
	return w.t.Output().Write(p)
}

func (w *testWriter) close() {
	w.mu.Lock()
	w.done = true
	w.mu.Unlock()
}
