// Command gpulayer is the single GpuLayer binary: coordinator, agent,
// built-in executor plugins, the CLI for people, and `gpulayer dev`.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
)

// exitError carries a process exit code through the command tree.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

type command struct {
	summary string
	run     func(ctx context.Context, args []string) error
	sub     map[string]*command
}

func commands() map[string]*command {
	return map[string]*command{
		"coordinator": {summary: "run or initialise a coordinator", sub: map[string]*command{
			"init": {summary: "mint the first admin and join tokens", run: coordinatorInit},
			"run":  {summary: "run a coordinator", run: coordinatorRun},
		}},
		"agent": {summary: "run an agent on a GPU node", sub: map[string]*command{
			"run": {summary: "register (or resume) and run tasks", run: agentRun},
		}},
		"job": {summary: "submit and inspect jobs", sub: map[string]*command{
			"submit": {summary: "submit a job", run: jobSubmit},
			"list":   {summary: "list jobs", run: jobList},
			"status": {summary: "show a job and its tasks", run: jobStatus},
			"logs":   {summary: "print a job's output", run: jobLogs},
			"cancel": {summary: "cancel a job", run: jobCancel},
		}},
		"worker": {summary: "inspect workers (admin)", sub: map[string]*command{
			"list":   {summary: "list workers", run: workerList},
			"status": {summary: "show one worker", run: workerStatus},
		}},
		"plugin": {summary: "serve a built-in executor plugin (run by the agent)", run: pluginServe},
		"dev":    {summary: "a coordinator and an agent in one process", run: devRun},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := dispatch(ctx, commands(), os.Args[1:], "gpulayer")
	stop()
	var ee exitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		os.Exit(ee.code)
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	default:
		fmt.Fprintln(os.Stderr, "gpulayer:", err)
		os.Exit(1)
	}
}

func dispatch(ctx context.Context, cmds map[string]*command, args []string, prefix string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(os.Stderr, cmds, prefix)
		if len(args) == 0 {
			return exitError{2}
		}
		return nil
	}
	c, ok := cmds[args[0]]
	if !ok {
		usage(os.Stderr, cmds, prefix)
		return fmt.Errorf("unknown command %q", strings.TrimSpace(prefix+" "+args[0]))
	}
	if c.sub != nil {
		return dispatch(ctx, c.sub, args[1:], prefix+" "+args[0])
	}
	return c.run(ctx, args[1:])
}

func usage(w io.Writer, cmds map[string]*command, prefix string) {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(w, "usage: %s <command> [flags]\n\ncommands:\n", prefix)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, cmds[n].summary)
	}
}
