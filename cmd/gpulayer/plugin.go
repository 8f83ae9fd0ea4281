package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpulayer/gpulayer/plugins"
)

// pluginCmd runs a built-in executor as a plugin process; the agent's
// plugin host starts it as `gpulayer plugin <name>`. Its one subcommand,
// init, writes a new plugin project; cobra tries subcommands first, so
// no built-in executor may be called "init".
func pluginCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plugin NAME",
		Short: "serve a built-in executor plugin (run by the agent), or start a new plugin project",
		Example: `  gpulayer plugin exec            # what an agent runs; not for people
  gpulayer plugin init my-exec    # a new plugin project in ./my-exec`,
		Args: exactArgs(1, fmt.Sprintf("built-in executor name (%s)", strings.Join(plugins.Names(), ", "))),
		RunE: func(_ *cobra.Command, args []string) error { return plugins.ServeBuiltin(args[0]) },
	}
	cmd.AddCommand(pluginInitCmd())
	return cmd
}
