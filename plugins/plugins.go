// Package plugins is the registry of GpuLayer's built-in executor
// plugins. They ship inside the gpulayer binary and still run out of
// process: the agent re-executes its own binary as `gpulayer plugin
// <name>`, whose main calls ServeBuiltin.
package plugins

import (
	"fmt"
	"os"
	"os/signal"
	"slices"
	"syscall"

	"github.com/gpulayer/gpulayer/plugins/container"
	"github.com/gpulayer/gpulayer/plugins/exec"
	"github.com/gpulayer/gpulayer/sdk/executor"
)

// Builtin maps each built-in executor's name to its constructor.
var Builtin = map[string]func() executor.Executor{
	exec.Name:      func() executor.Executor { return exec.New(exec.Options{}) },
	container.Name: func() executor.Executor { return container.New(container.Options{}) },
}

// Lookup returns a new instance of the built-in executor called name.
func Lookup(name string) (executor.Executor, bool) {
	mk, ok := Builtin[name]
	if !ok {
		return nil, false
	}
	return mk(), true
}

// Names returns the built-in executors' names, sorted.
func Names() []string {
	names := make([]string, 0, len(Builtin))
	for n := range Builtin {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// ServeBuiltin serves the built-in executor called name as a go-plugin
// plugin, for `gpulayer plugin <name>`. It returns an error wrapping
// ErrUnknownPlugin at once if name is unknown, and nil once the agent has
// closed the plugin, after killing the tasks still running. Started by hand (without go-plugin's handshake) the
// process prints an explanation and exits with status 1.
//
// SIGTERM ends the process (status 143) after it killed every task it
// runs, whole process groups: the agent starts its plugins with SIGTERM
// as their parent-death signal, so that an agent that dies (SIGKILL, a
// crash) takes its tasks with it instead of leaving them running while
// the coordinator hands them out again.
func ServeBuiltin(name string) error {
	impl, ok := Lookup(name)
	if !ok {
		return fmt.Errorf("%w %q (built-in: %v)", ErrUnknownPlugin, name, Names())
	}
	k, canKill := impl.(killer)
	if canKill {
		defer killOnSIGTERM(k, func() { os.Exit(128 + int(syscall.SIGTERM)) })()
	}
	executor.Serve(impl)
	if canKill {
		// The agent closed the plugin: nothing can wait for, stop or read
		// the tasks still running any more, so they end with it (a
		// container would otherwise outlive the process).
		k.KillAll()
	}
	return nil
}

// killer is an executor that can kill every task it runs at once.
type killer interface{ KillAll() }

// killOnSIGTERM kills k's tasks and calls exit when the process receives
// SIGTERM, until the returned func is called.
func killOnSIGTERM(k killer, exit func()) (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-ch:
			k.KillAll()
			exit()
		case <-done:
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}
