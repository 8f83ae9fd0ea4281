package main

import (
	"github.com/spf13/cobra"
)

// newRootCmd builds the whole command tree.
func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "gpulayer",
		Short: "GpuLayer: coordinators, agents and the CLI of a GPU job runtime",
		Long: `gpulayer is the one GpuLayer binary: it runs a coordinator, an agent or
both (gpulayer dev), serves the built-in executor plugins, and is the CLI.

Flags go before or after the arguments; -- ends them. Every flag can also
be set in the environment as GPULAYER_<FLAG_NAME> (--data-dir:
GPULAYER_DATA_DIR); the command line wins. A profile of the CLI's config
(gpulayer profile) holds a cluster's addresses, CA and token. Exit codes:
0 ok, 1 failure, 2 usage error; job submit --wait exits with its failed
task's code.`,
		Example: `  gpulayer dev
  export GPULAYER_ADDR=http://127.0.0.1:7070 GPULAYER_TOKEN=glc_…
  gpulayer job submit --gpus 1 --wait -- sh -c 'echo "GPU $CUDA_VISIBLE_DEVICES"'
  gpulayer job list --watch`,
		Args:              cobra.ArbitraryArgs,
		RunE:              groupArgs,
		SilenceErrors:     true,
		SilenceUsage:      true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error { return applySources(cmd) },
	}
	root.SetFlagErrorFunc(flagError)
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetHelpCommand(helpCmd())
	root.AddCommand(coordinatorCmd(), agentCmd(), jobCmd(), artifactCmd(), workerCmd(), tokenCmd(), enrollmentCmd(),
		auditCmd(), groupCmd(), teamCmd(), usageCmd(), queueCmd(), operatorCmd(), tlsCmd(), pluginCmd(), devCmd(), versionCmd(), completionCmd(), profileCmd(), loginCmd())
	root.AddCommand(gpuCmd())
	documentEnv(root)
	return root
}

// group is a command that only holds subcommands.
func group(use, short, example string, subs ...*cobra.Command) *cobra.Command {
	c := &cobra.Command{Use: use, Short: short, Example: example, Args: cobra.ArbitraryArgs, RunE: groupArgs}
	c.AddCommand(subs...)
	return c
}

// applySources fills the flags not given on the command line from the
// environment, then, for the commands that take one, the config file:
// flag > environment > file > default.
func applySources(cmd *cobra.Command) error {
	if err := bindEnv(cmd.Flags()); err != nil {
		return err
	}
	return bindConfigFile(cmd)
}

func helpCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "help [command]",
		Short:   "help about any command",
		Example: "  gpulayer help job submit",
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := c.Root().Find(args)
			if err != nil || cmd == nil || len(rest) > 0 {
				return usagef("no help for %q: no such command", args)
			}
			return cmd.Help()
		},
	}
}

func completionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish",
		Short: "print a shell completion script",
		Long:  "completion prints a script that completes gpulayer's commands and flags in bash, zsh or fish.",
		Example: `  source <(gpulayer completion bash)
  gpulayer completion zsh > "${fpath[1]}/_gpulayer"
  gpulayer completion fish > ~/.config/fish/completions/gpulayer.fish`,
		ValidArgs: []string{"bash", "zsh", "fish"},
		Args:      exactArgs(1, "shell (bash, zsh or fish)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			root, w := cmd.Root(), cmd.OutOrStdout()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(w, true)
			case "zsh":
				return root.GenZshCompletion(w)
			case "fish":
				return root.GenFishCompletion(w, true)
			}
			return usagef("unknown shell %q: want bash, zsh or fish", args[0])
		},
	}
}
