package pluginhost

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"os/exec"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	plugin "github.com/hashicorp/go-plugin"

	"github.com/gpulayer/gpulayer/internal/cloexec"
	"github.com/gpulayer/gpulayer/internal/hclogslog"
	"github.com/gpulayer/gpulayer/sdk/executor"
)

// BinaryPrefix starts the file name of every external executor plugin:
// gpulayer-executor-<name>.
const BinaryPrefix = "gpulayer-executor-"

// validName is what an executor name may look like; it keeps names from
// reaching outside the plugin directory.
var validName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// command returns the command that serves executor name, and for a
// pinned plugin the SecureConfig that has go-plugin check its hash once
// more right before it runs it. Built-in executors win over
// plugin-directory executables of the same name.
func (h *Host) command(name string) (*exec.Cmd, *plugin.SecureConfig, error) {
	if !validName.MatchString(name) {
		return nil, nil, fmt.Errorf("%w %q", ErrUnknownExecutor, name)
	}
	if slices.Contains(h.builtin, name) {
		return exec.Command(h.exe, h.cfg.SelfArgs(name)...), nil, nil
	}
	v, err := h.vet(name)
	if err != nil {
		return nil, nil, err
	}
	var secure *plugin.SecureConfig
	if v.pin != nil {
		secure = &plugin.SecureConfig{Checksum: v.pin, Hash: sha256.New()}
	}
	return exec.Command(v.path), secure, nil
}

// launch starts the plugin process for name and connects to it.
func (h *Host) launch(ctx context.Context, name string) (*instance, error) {
	cmd, secure, err := h.command(name)
	if err != nil {
		return nil, err
	}
	log := h.log.With("executor", name)
	cmd.Env = pluginEnv()
	cmd.SysProcAttr = pluginSysProcAttr()
	// A descriptor the agent inherited without close-on-exec (from the
	// shell or service manager that started it) would reach the plugin,
	// and the plugin's tasks.
	if err := cloexec.Mark(); err != nil {
		log.Warn("marking inherited descriptors close-on-exec", "error", err)
	}
	timeout := h.cfg.StartTimeout
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < timeout {
		timeout = max(time.Until(dl), time.Millisecond)
	}
	pluginLog := hclogslog.New(h.cfg.Logger.With("component", "plugin", "executor", name))
	stdio := func(stream string) *hclogslog.LineWriter {
		return &hclogslog.LineWriter{Log: func(line string) {
			log.Debug("plugin wrote to "+stream, "line", line)
		}}
	}
	words := newLastWords()
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  executor.Handshake,
		Plugins:          executor.PluginSet(nil),
		Cmd:              cmd,
		SkipHostEnv:      true, // cmd.Env is all the plugin gets
		SecureConfig:     secure,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           pluginLog,
		StartTimeout:     timeout,
		AutoMTLS:         true,
		SyncStdout:       stdio("stdout"),
		SyncStderr:       stdio("stderr"),
		Stderr:           words,
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
	inst := &instance{name: name, client: client, cmd: cmd, log: log, words: words, events: h.cfg.Events}
	inst.exec = &pluginExecutor{inst: inst, remote: remote}
	log.Info("executor plugin started", "path", cmd.Path, "pid", pid(cmd))
	h.cfg.Events.PluginStarted(name)
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
	words  *lastWords // the end of the process's standard error
	events Events

	// answered is when a call last came back from the process (monotonic,
	// since epoch; 0 for never): a process that answered a moment ago
	// needs no ping.
	answered atomic.Int64

	mu     sync.Mutex
	broken bool // a call saw the process die
	dead   bool // kill was called
}

// epoch is the origin of instance.answered: time.Since(epoch) reads the
// monotonic clock.
var epoch = time.Now()

// sawAnswer records that a call came back from the process.
func (i *instance) sawAnswer() { i.answered.Store(max(1, int64(time.Since(epoch)))) }

// pingTimeout bounds the liveness check Get makes on a running plugin.
const pingTimeout = 5 * time.Second

// pingAfter is how long after its last answer Get pings a plugin before
// handing it out again. While tasks flow, calls answer all the time and
// Get pings nothing: a ping per Get, under the slot's lock, made every
// task of one executor wait for the others' round trips.
const pingAfter = time.Second

// alive reports whether the process still runs and, unless it answered
// within pingAfter, answers Info. Once it does not, the instance counts
// as crashed.
func (i *instance) alive(ctx context.Context) bool {
	if !i.isBroken() && !i.client.Exited() {
		if at := i.answered.Load(); at != 0 && time.Since(epoch)-time.Duration(at) < pingAfter {
			return true
		}
		ctx, cancel := context.WithTimeout(ctx, pingTimeout)
		defer cancel()
		if _, err := i.exec.remote.Info(ctx); err == nil {
			i.sawAnswer()
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

// markBroken records that the process died or stopped answering; the
// first time, unless the host killed it, that is a crash.
func (i *instance) markBroken() {
	i.mu.Lock()
	crashed := !i.broken && !i.dead
	i.broken = true
	i.mu.Unlock()
	if crashed {
		i.events.PluginCrashed(i.name)
	}
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
