package main

import (
	"context"
	"fmt"

	"github.com/gpulayer/gpulayer/plugins"
)

// pluginServe runs a built-in executor as a plugin process; the agent's
// plugin host starts it as `gpulayer plugin <name>`.
func pluginServe(_ context.Context, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: gpulayer plugin <name> (built-in: %v)", plugins.Names())
	}
	return plugins.ServeBuiltin(args[0])
}
