package pluginhost

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	plugin "github.com/hashicorp/go-plugin"

	"github.com/gpulayer/gpulayer/internal/hclogslog"
	"github.com/gpulayer/gpulayer/sdk/executor"
)

// BinaryPrefix starts the file name of every external executor plugin:
// gpulayer-executor-<name>.
const BinaryPrefix = "gpulayer-executor-"

// validName is what an executor name may look like; it keeps names from
// reaching outside the plugin directory.
var validName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// scanDir lists the executor names found in the plugin directory.
func (h *Host) scanDir() []string {
	if h.cfg.PluginDir == "" {
		return nil
	}
	entries, err := os.ReadDir(h.cfg.PluginDir)
	if err != nil {
		h.log.Warn("cannot read plugin directory", "dir", h.cfg.PluginDir, "error", err)
		return nil
	}
	var names []string
	for _, e := range entries {
		name, ok := strings.CutPrefix(e.Name(), BinaryPrefix)
		if !ok || !validName.MatchString(name) {
			continue
		}
		if _, err := h.pluginPath(name); err == nil {
			names = append(names, name)
		}
	}
	return names
}

// pluginPath returns the plugin directory's executable for name.
func (h *Host) pluginPath(name string) (string, error) {
	if h.cfg.PluginDir == "" {
		return "", fmt.Errorf("%w %q", ErrUnknownExecutor, name)
	}
	path := filepath.Join(h.cfg.PluginDir, BinaryPrefix+name)
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("%w %q", ErrUnknownExecutor, name)
	}
	return path, nil
}

// command returns the command that serves executor name. Built-in
// executors win over plugin-directory executables of the same name.
func (h *Host) command(name string) (*exec.Cmd, error) {
	if !validName.MatchString(name) {
		return nil, fmt.Errorf("%w %q", ErrUnknownExecutor, name)
	}
	if slices.Contains(h.builtin, name) {
		return exec.Command(h.exe, h.cfg.SelfArgs(name)...), nil
	}
	path, err := h.pluginPath(name)
	if err != nil {
		return nil, err
	}
	return exec.Command(path), nil
}

// launch starts the plugin process for name and connects to it.
func (h *Host) launch(ctx context.Context, name string) (*instance, error) {
	cmd, err := h.command(name)
	if err != nil {
		return nil, err
	}
	timeout := h.cfg.StartTimeout
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < timeout {
		timeout = max(time.Until(dl), time.Millisecond)
	}
	log := h.log.With("executor", name)
	pluginLog := hclogslog.New(h.cfg.Logger.With("component", "plugin", "executor", name))
	stdio := func(stream string) *hclogslog.LineWriter {
		return &hclogslog.LineWriter{Log: func(line string) {
			log.Debug("plugin wrote to "+stream, "line", line)
		}}
	}
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  executor.Handshake,
		Plugins:          executor.PluginSet(nil),
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           pluginLog,
		StartTimeout:     timeout,
		AutoMTLS:         true,
		SyncStdout:       stdio("stdout"),
		SyncStderr:       stdio("stderr"),
	})
	fail := func(err error) (*instance, error) {
		client.Kill()
		return nil, fmt.Errorf("%w: %q (%s): %v", ErrPluginStart, name, cmd.Path, err)
	}
	rpc, err := client.Client()
	if err != nil {
		return fail(err)
	}
	raw, err := rpc.Dispense(executor.PluginName)
	if err != nil {
		return fail(err)
	}
	remote, ok := raw.(executor.Executor)
	if !ok {
		return fail(fmt.Errorf("plugin dispensed %T, not an executor", raw))
	}
	inst := &instance{name: name, client: client, cmd: cmd, log: log}
	inst.exec = &pluginExecutor{inst: inst, remote: remote}
	log.Info("executor plugin started", "path", cmd.Path, "pid", pid(cmd))
	return inst, nil
}

func pid(cmd *exec.Cmd) int {
	if cmd.Process == nil {
		return 0
	}
	return cmd.Process.Pid
}

// instance is one running plugin process.
type instance struct {
	name   string
	client *plugin.Client
	cmd    *exec.Cmd
	log    *slog.Logger
	exec   *pluginExecutor

	mu     sync.Mutex
	broken bool // a call saw the process die
	dead   bool // kill was called
}

// pingTimeout bounds the liveness check Get makes on a running plugin.
const pingTimeout = 5 * time.Second

// alive reports whether the process still runs and answers Info. Once it
// does not, the instance counts as crashed.
func (i *instance) alive(ctx context.Context) bool {
	if !i.isBroken() && !i.client.Exited() {
		ctx, cancel := context.WithTimeout(ctx, pingTimeout)
		defer cancel()
		if _, err := i.exec.remote.Info(ctx); err == nil {
			return true
		}
		if ctx.Err() != nil && !i.client.Exited() {
			return true // our deadline, not the plugin's fault
		}
	}
	i.markBroken()
	return false
}

// exitStatus describes how the process ended, once it has.
func (i *instance) exitStatus() string {
	if !i.client.Exited() {
		return ""
	}
	// go-plugin set ProcessState in cmd.Wait before marking the client
	// exited under its lock, which Exited took: reading it is safe.
	if st := i.cmd.ProcessState; st != nil {
		return st.String()
	}
	return ""
}

func (i *instance) isBroken() bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.broken
}

func (i *instance) markBroken() {
	i.mu.Lock()
	i.broken = true
	i.mu.Unlock()
}

func (i *instance) killed() bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.dead
}

// kill ends the process and releases go-plugin's resources. Calls still
// in flight then fail with ErrClosed rather than a crash.
func (i *instance) kill() {
	i.mu.Lock()
	i.dead = true
	i.mu.Unlock()
	i.client.Kill()
}
