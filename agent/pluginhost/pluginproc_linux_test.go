package pluginhost_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// pluginProcess is the pid of the one plugin process this test binary
// runs now (a child serving a built-in executor).
func pluginProcess(t *testing.T) int {
	t.Helper()
	var found []int
	for _, c := range childrenOf(os.Getpid()) {
		if b, _ := os.ReadFile("/proc/" + strconv.Itoa(c) + "/cmdline"); strings.Contains(string(b), serveArg) {
			found = append(found, c)
		}
	}
	if len(found) != 1 {
		t.Fatalf("plugin processes below the test: %v, want one", found)
	}
	return found[0]
}

// The attack: a task printed the agent's tokens. The plugin process
// itself (the task's parent, or its sandbox's) holds none of the agent's
// environment beyond PATH, LANG, LC_*, TZ, TMPDIR and go-plugin's
// handshake.
func TestPluginProcessEnvironmentIsMinimal(t *testing.T) {
	t.Setenv("GPULAYER_ADMIN_TOKEN", "glc_admin_canary")
	t.Setenv("GPULAYER_JOIN_TOKEN", "glj_join_canary")
	t.Setenv("GL_PLUGIN_CANARY", "canary")
	h := newHost(t, "")
	get(t, h, "exec")
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pluginProcess(t)) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00") {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == "PATH", name == "LANG", name == "TZ", name == "TMPDIR", strings.HasPrefix(name, "LC_"):
		case strings.HasPrefix(name, "PLUGIN_"), name == "GPULAYER_PLUGIN":
			// go-plugin's handshake
		default:
			t.Errorf("plugin process has %s in its environment", name)
		}
	}
}

// The attack: a descriptor the shell that started the agent left open
// (not close-on-exec) reached every plugin, and through it every task.
// The agent marks what it inherited close-on-exec before it starts a
// plugin.
func TestPluginInheritsNoDescriptors(t *testing.T) {
	leak := filepath.Join(t.TempDir(), "leaked-into-the-agent")
	f, err := os.Create(leak)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const fd = 100 // dup2 leaves it without close-on-exec, as inherited
	if err := unix.Dup2(int(f.Fd()), fd); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	h := newHost(t, "")
	get(t, h, "exec")
	dir := "/proc/" + strconv.Itoa(pluginProcess(t)) + "/fd"
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if target, _ := os.Readlink(filepath.Join(dir, e.Name())); target == leak || e.Name() == strconv.Itoa(fd) {
			t.Errorf("the plugin holds the agent's inherited descriptor: fd %s -> %s", e.Name(), target)
		}
	}
}
