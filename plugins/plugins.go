// Package plugins is the registry of GpuLayer's built-in executor
// plugins. They ship inside the gpulayer binary and still run out of
// process: the agent re-executes its own binary as `gpulayer plugin
// <name>`, whose main calls ServeBuiltin.
package plugins

import (
	"fmt"
	"slices"

	"github.com/gpulayer/gpulayer/plugins/exec"
	"github.com/gpulayer/gpulayer/sdk/executor"
)

// Builtin maps each built-in executor's name to its constructor.
var Builtin = map[string]func() executor.Executor{
	exec.Name: func() executor.Executor { return exec.New(exec.Options{}) },
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
// closed the plugin. Started by hand (without go-plugin's handshake) the
// process prints an explanation and exits with status 1.
func ServeBuiltin(name string) error {
	impl, ok := Lookup(name)
	if !ok {
		return fmt.Errorf("%w %q (built-in: %v)", ErrUnknownPlugin, name, Names())
	}
	executor.Serve(impl)
	return nil
}
