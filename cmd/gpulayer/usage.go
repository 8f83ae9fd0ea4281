package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// errUsage marks a command line the CLI cannot run: an unknown command or
// flag, a bad flag value, the wrong number of arguments. It exits 2.
var errUsage = errors.New("usage error")

// usageError is an error of the command line, worded for people; it
// matches errUsage.
type usageError struct{ err error }

func (e usageError) Error() string   { return e.err.Error() }
func (e usageError) Unwrap() []error { return []error{e.err, errUsage} }

// usagef makes a usage error; %w wraps as in fmt.Errorf.
func usagef(format string, a ...any) error {
	return usageError{fmt.Errorf(format, a...)}
}

// flagError is every command's cobra FlagErrorFunc: a flag that does not
// parse is a usage error.
func flagError(_ *cobra.Command, err error) error { return usageError{err} }

// exactArgs wants exactly n positional arguments, what naming them.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) == n {
			return nil
		}
		if n == 1 {
			return usagef("give exactly one %s, got %d argument(s)", what, len(args))
		}
		return usagef("give %d arguments (%s), got %d", n, what, len(args))
	}
}

// minArgs wants at least n positional arguments, what naming them.
func minArgs(n int, what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) < n {
			return usagef("give at least %d argument(s): %s", n, what)
		}
		return nil
	}
}

// maxArgs wants at most n positional arguments, what naming them.
func maxArgs(n int, what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) > n {
			return usagef("give at most %d argument(s) (%s), got %q", n, what, args)
		}
		return nil
	}
}

// noArgs refuses positional arguments.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("%s takes no arguments, got %q", cmd.CommandPath(), args)
	}
	return nil
}

// groupArgs is the Args of a command that only holds subcommands: it is
// reached with none or an unknown one.
func groupArgs(cmd *cobra.Command, args []string) error {
	names := make([]string, 0, len(cmd.Commands()))
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	if len(args) == 0 {
		return usagef("%s needs a command: %s", cmd.CommandPath(), strings.Join(names, ", "))
	}
	return usagef("unknown command %q for %q (commands: %s)", args[0], cmd.CommandPath(), strings.Join(names, ", "))
}
