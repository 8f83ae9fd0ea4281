package pluginhost_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/agent/pluginhost"
	"github.com/gpulayer/gpulayer/sdk/executor"
	"github.com/gpulayer/gpulayer/sdk/executor/executortest"
)

func jsonConfig(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func TestNames(t *testing.T) {
	dir := t.TempDir()
	for name, mode := range map[string]os.FileMode{
		pluginhost.BinaryPrefix + "gpu-burn": 0o755, // listed
		pluginhost.BinaryPrefix + "notexec":  0o644, // not executable
		pluginhost.BinaryPrefix + "Bad.Name": 0o755, // not a valid name
		"gpulayer-other-thing":               0o755, // wrong prefix
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, pluginhost.BinaryPrefix+"adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	h := newHost(t, dir)
	if got, want := h.Names(), []string{"exec", "gpu-burn"}; !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	if got := newHost(t, "").Names(); !slices.Equal(got, []string{"exec"}) {
		t.Errorf("Names() without a plugin dir = %v", got)
	}
}

func TestUnknownExecutor(t *testing.T) {
	dir := t.TempDir()
	h := newHost(t, dir)
	for _, name := range []string{"nope", "../../bin/sh", "", "notexec"} {
		if _, err := h.Get(t.Context(), name); !errors.Is(err, pluginhost.ErrUnknownExecutor) {
			t.Errorf("Get(%q) = %v, want ErrUnknownExecutor", name, err)
		}
	}
}

func TestPluginThatIsNotAPlugin(t *testing.T) {
	dir := t.TempDir()
	script := "#!/bin/sh\necho 'I am not a plugin'\nexit 1\n"
	if err := os.WriteFile(filepath.Join(dir, pluginhost.BinaryPrefix+"bogus"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	h := newHost(t, dir)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	_, err := h.Get(ctx, "bogus")
	if !errors.Is(err, pluginhost.ErrPluginStart) {
		t.Fatalf("Get(bogus) = %v, want ErrPluginStart", err)
	}
}

// echoSpec drives the example echo plugin through the harness.
func echoSpec() executortest.Spec {
	return executortest.Spec{
		Print: func(lines []string) []byte {
			return jsonConfig(map[string]any{"message": strings.Join(lines, "\n")})
		},
		Block:    func() []byte { return jsonConfig(map[string]any{"message": "tick", "repeat": -1, "interval": "20ms"}) },
		Exit:     func(code int) []byte { return jsonConfig(map[string]any{"message": "bye", "exit_code": code}) },
		PrintEnv: func(key string) []byte { return jsonConfig(map[string]any{"message": "${" + key + "}"}) },
		Invalid:  []byte(`{"message": "hi", "repeats": 2}`),
	}
}

// get returns h's executor name or fails the test.
func get(t *testing.T, h *pluginhost.Host, name string) executor.Executor {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	e, err := h.Get(ctx, name)
	if err != nil {
		t.Fatalf("Get(%q): %v", name, err)
	}
	return e
}

// TestEchoPluginConforms runs the conformance harness against the
// example plugin as a real process launched from the plugin directory.
func TestEchoPluginConforms(t *testing.T) {
	h := newHost(t, buildPlugins(t))
	info, err := get(t, h, "echo").Info(t.Context())
	if err != nil || info.Name != "echo" {
		t.Fatalf("Info = %+v, %v", info, err)
	}
	executortest.RunChecks(t, echoSpec(), func() executor.Executor { return get(t, h, "echo") })
}

func TestPluginProcessReused(t *testing.T) {
	h := newHost(t, buildPlugins(t))
	ctx := t.Context()
	e1 := get(t, h, "crash")
	task := executortest.NewTask(t, jsonConfig(map[string]any{}))
	if err := e1.Start(ctx, task); err != nil {
		t.Fatal(err)
	}
	e2 := get(t, h, "crash")
	i1, _ := e1.Info(ctx)
	i2, _ := e2.Info(ctx)
	if i1.Version == "" || i1.Version != i2.Version {
		t.Errorf("plugin pid %q then %q: want one process reused", i1.Version, i2.Version)
	}
	// The second handle sees the task started through the first.
	if err := e2.Stop(ctx, task.ID, 0); err != nil {
		t.Errorf("Stop through second Get: %v", err)
	}
}

// gone waits until process pid has disappeared.
func gone(ctx context.Context, t *testing.T, pid int) {
	t.Helper()
	for {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("process %d still exists", pid)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func TestCloseKillsPlugins(t *testing.T) {
	h := newHost(t, buildPlugins(t))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	e := get(t, h, "crash")
	info, err := e.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(info.Version)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	gone(ctx, t, pid)
	if _, err := h.Get(ctx, "crash"); !errors.Is(err, pluginhost.ErrClosed) {
		t.Errorf("Get after Close = %v, want ErrClosed", err)
	}
	if _, err := e.Info(ctx); !errors.Is(err, pluginhost.ErrClosed) || errors.Is(err, pluginhost.ErrPluginCrashed) {
		t.Errorf("call after Close = %v, want ErrClosed, not a crash", err)
	}
}

func TestNewDefaultsToRunningBinary(t *testing.T) {
	h, err := pluginhost.New(pluginhost.Config{})
	if err != nil {
		t.Fatalf("New with defaults: %v", err)
	}
	defer func() { _ = h.Close() }()
	if !slices.Contains(h.Names(), "exec") {
		t.Errorf("Names() = %v, want the built-in exec", h.Names())
	}
}
