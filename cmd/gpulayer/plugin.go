package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpulayer/gpulayer/plugins"
)

// pluginCmd runs a built-in executor as a plugin process; the agent's
// plugin host starts it as `gpulayer plugin <name>`.
func pluginCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "plugin NAME",
		Short:   "serve a built-in executor plugin (run by the agent)",
		Example: "  gpulayer plugin exec   # what an agent runs; not for people",
		Args:    exactArgs(1, fmt.Sprintf("built-in executor name (%s)", strings.Join(plugins.Names(), ", "))),
		RunE:    func(_ *cobra.Command, args []string) error { return plugins.ServeBuiltin(args[0]) },
	}
}
