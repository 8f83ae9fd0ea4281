// Command gpulayer is the single GpuLayer binary: coordinator, agent,
// built-in executor plugins, the CLI for people, and `gpulayer dev`.
//
// The command tree is built with cobra (tree.go); flags may come before or
// after positional arguments, `--` ends them, and every flag can also be
// given as GPULAYER_<FLAG_NAME> in the environment (env.go). Exit codes are
// documented in docs/cli.md: 0 ok, 1 failure, 2 usage, and `job submit
// --wait` exits with its failed task's own code.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
)

// Exit codes, documented in docs/cli.md.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// exitError carries a process exit code through the command tree.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	ctx, cancel := context.WithCancel(ctx)
	stopTerm := handleSIGTERM(cancel) // terminate.go: an agent drains first
	code := execute(ctx, os.Args[1:], os.Stderr)
	stopTerm()
	cancel()
	stop()
	os.Exit(code)
}

// execute runs the command line args and returns the exit code, having
// written any error (one line, and for a usage error a hint to --help) to
// stderr.
func execute(ctx context.Context, args []string, stderr io.Writer) int {
	stderr = safeWriter{stderr} // an error message may quote a coordinator's or a task's text
	root := newRootCmd()
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	var ee exitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, errUsage):
		fmt.Fprintln(stderr, "gpulayer:", err)
		if cmd == nil {
			cmd = root
		}
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
		return exitUsage
	default:
		printError(stderr, err)
		return exitFailure
	}
}
