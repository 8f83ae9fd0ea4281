package plugins

import (
	"context"

	"github.com/gpulayer/gpulayer/plugins/container"
)

// probes check, for the built-in executors that need something of the
// node, that it is there: the container executor needs a Docker daemon
// that answers.
var probes = map[string]func(context.Context) error{
	container.Name: container.Probe,
}

// Usable reports why the built-in executor name cannot run tasks on this
// node, or nil when it can (or needs nothing of the node).
func Usable(ctx context.Context, name string) error {
	if p, ok := probes[name]; ok {
		return p(ctx)
	}
	return nil
}

// NeedsProbe reports whether the built-in executor name needs something
// of the node that Usable checks.
func NeedsProbe(name string) bool {
	_, ok := probes[name]
	return ok
}
