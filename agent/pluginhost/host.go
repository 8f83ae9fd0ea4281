// Package pluginhost launches executor plugins and hands the agent an
// executor.Executor for each. Every executor runs in its own process,
// launched through hashicorp/go-plugin over gRPC, once, and reused by all
// tasks: built-in executors by re-executing the gpulayer binary
// (`gpulayer plugin <name>`), others from executables named
// gpulayer-executor-<name> in the plugin directory.
//
// Only plugin-directory files the agent can trust are advertised and run:
// regular files (no symbolic links), owned by root or the agent's user,
// not writable by group or others, executable, in a directory that is
// not writable by group or others either; a plugin pinned to a SHA-256
// (Config.PluginSHA256, PinsFile) must match it. Plugin processes get a
// minimal environment (pluginEnv), never the agent's credentials.
//
// A plugin that dies fails the calls in flight and any later call on the
// executor it served with an error matching ErrPluginCrashed; the next Get
// launches a new process. The agent lives on.
package pluginhost

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/gpulayer/gpulayer/plugins"
	"github.com/gpulayer/gpulayer/sdk/executor"
)

// Config configures a Host.
type Config struct {
	// Logger receives the host's logs and the plugins' own logs; nil
	// means slog.Default().
	Logger *slog.Logger
	// SelfExe is the gpulayer binary, re-executed to run built-in
	// executors; empty means os.Executable().
	SelfExe string
	// SelfArgs gives the arguments that make SelfExe serve the built-in
	// executor name; nil means {"plugin", name}.
	SelfArgs func(name string) []string
	// PluginDir holds external plugins, executables named
	// gpulayer-executor-<name>; empty means none.
	PluginDir string
	// PluginSHA256 pins plugin-directory executables by executor name to
	// the hex SHA-256 of their file, on top of PinsFile in PluginDir; a
	// pinned plugin whose file does not match is neither advertised nor
	// run.
	PluginSHA256 map[string]string
	// StartTimeout bounds a plugin's launch and handshake; zero means
	// one minute.
	StartTimeout time.Duration
	// Events, when set, hears of every plugin process started and
	// crashed.
	Events Events
	// ProbeBuiltins, when set, checks once at New the built-in executors
	// that need something of the node (plugins.Usable) and advertises
	// those that pass: the container executor where a Docker daemon
	// answers. Unset, those executors are neither advertised nor run.
	ProbeBuiltins bool
}

// Host owns the executor plugin processes. It is safe for concurrent use.
type Host struct {
	cfg     Config
	log     *slog.Logger
	exe     string
	builtin []string

	pins map[string][]byte

	mu     sync.Mutex
	slots  map[string]*slot
	closed bool

	trustMu sync.Mutex
	sums    map[string]cachedSum // by path
	refused map[string]string    // by name: why it is not advertised
}

// slot serialises launches of one executor and holds its live instance.
type slot struct {
	mu   sync.Mutex
	inst *instance
}

// New returns a Host. It launches nothing until Get; it fails only if a
// pin is malformed (ErrBadPin) or SelfExe is empty and the running binary
// cannot be located.
func New(cfg Config) (*Host, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.SelfArgs == nil {
		cfg.SelfArgs = func(name string) []string { return []string{"plugin", name} }
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = time.Minute
	}
	if cfg.Events == nil {
		cfg.Events = noEvents{}
	}
	h := &Host{
		cfg:     cfg,
		log:     cfg.Logger.With("component", "pluginhost"),
		exe:     cfg.SelfExe,
		builtin: plugins.Names(),
		slots:   make(map[string]*slot),
		pins:    make(map[string][]byte),
		sums:    make(map[string]cachedSum),
		refused: make(map[string]string),
	}
	for name, sum := range cfg.PluginSHA256 {
		if !validName.MatchString(name) {
			return nil, fmt.Errorf("%w: %q is not an executor name", ErrBadPin, name)
		}
		raw, err := decodeSum(sum)
		if err != nil {
			return nil, fmt.Errorf("%w for %s: %v", ErrBadPin, name, err)
		}
		h.pins[name] = raw
	}
	h.builtin = usableBuiltins(h.builtin, cfg.ProbeBuiltins, h.log)
	if h.exe == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("pluginhost: locating the gpulayer binary for built-in executors: %w", err)
		}
		h.exe = exe
	}
	return h, nil
}

// Names returns the executors this host can launch, sorted: the built-in
// ones and those found in the plugin directory now.
func (h *Host) Names() []string {
	names := append([]string(nil), h.builtin...)
	for _, n := range h.scanDir() {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// Get returns the executor called name, launching its plugin process if
// none is running (the first time, or after it exited). The returned
// executor stays bound to that process: once it dies, its calls fail with
// ErrPluginCrashed and a new Get is needed. ctx bounds the launch.
func (h *Host) Get(ctx context.Context, name string) (executor.Executor, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, ErrClosed
	}
	s, ok := h.slots[name]
	if !ok {
		s = &slot{}
		h.slots[name] = s
	}
	h.mu.Unlock()

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inst != nil {
		if s.inst.alive(ctx) {
			return s.inst.exec, nil
		}
		h.log.Warn("executor plugin gone; relaunching", "executor", name, "exit", s.inst.exitStatus())
		s.inst.kill()
		s.inst = nil
	}
	inst, err := h.launch(ctx, name)
	if err != nil {
		return nil, err
	}
	// Close may have run while we launched; it cannot have seen inst.
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	if closed {
		inst.kill()
		return nil, ErrClosed
	}
	s.inst = inst
	return inst.exec, nil
}

// Close kills every plugin process (politely first, as go-plugin does)
// and makes later Gets fail with ErrClosed. Tasks still running in
// plugins end with them. Close always returns nil.
func (h *Host) Close() error {
	h.mu.Lock()
	h.closed = true
	slots := make([]*slot, 0, len(h.slots))
	for _, s := range h.slots {
		slots = append(slots, s)
	}
	h.mu.Unlock()

	var wg sync.WaitGroup
	for _, s := range slots {
		wg.Go(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.inst != nil {
				s.inst.kill()
				s.inst = nil
			}
		})
	}
	wg.Wait()
	return nil
}
