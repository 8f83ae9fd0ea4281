package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// detachKey is Ctrl-]: typed on an interactive terminal, it ends the
// session (like telnet's escape) instead of reaching the command.
const detachKey = 0x1d

// errDetached says the user left the session with the detach key.
var errDetached = errors.New("detached (Ctrl-]): the session ended and the remote command with it")

func jobExecCmd() *cobra.Command {
	var stdin, tty bool
	cmd := &cobra.Command{
		Use:   "exec [flags] TASK -- COMMAND [ARG...]",
		Short: "run a command inside a running task",
		Long: `exec runs COMMAND inside the running task TASK (a task id, as job status
shows), as the task's user, in its sandbox: the exec executor's namespaces,
or the task's container. It needs a submit token of the job's team, or an
admin's; anyone else is told the task does not exist.

-i sends this terminal's stdin to the command; -t gives it a terminal
(TTY), so -it runs an interactive shell: this terminal goes raw, its size
follows window changes, and Ctrl-] ends the session (the remote command is
ended with it). Without -t, the command's stdout and stderr stay apart.

gpulayer exits with the remote command's exit code.`,
		Example: `  gpulayer job exec j1a2b3c4d-0 -- nvidia-smi -L
  gpulayer job exec -it j1a2b3c4d-0 -- /bin/sh
  tar c data | gpulayer job exec -i j1a2b3c4d-0 -- tar x -C /tmp`,
		Args:              minArgs(2, "a task id and a command"),
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	cmd.Flags().BoolVarP(&stdin, "stdin", "i", false, "send stdin to the command")
	cmd.Flags().BoolVarP(&tty, "tty", "t", false, "run the command on a terminal (with -i: interactive, raw; Ctrl-] ends the session)")
	return clientLeaf(cmd, nil, func(cmd *cobra.Command, c *client.Client, args []string, _ *outputFlags) error {
		o := client.ExecOptions{Command: args[1:], TTY: tty, Stdout: os.Stdout, Stderr: os.Stderr}
		if len(o.Command) > api.MaxExecArgs {
			return usagef("a command has at most %d arguments", api.MaxExecArgs)
		}
		ctx := cmd.Context()
		var in io.Reader
		if stdin {
			in = os.Stdin
		}
		fd := int(os.Stdin.Fd())
		if tty && stdin && term.IsTerminal(fd) {
			restore, err := rawTerminal(fd)
			if err != nil {
				return err
			}
			defer restore()
			det := newDetacher(in)
			in = det
			var cancel func()
			ctx, cancel = det.context(ctx)
			defer cancel()
		}
		o.Stdin = in
		if tty {
			if w, h, err := term.GetSize(int(os.Stdout.Fd())); err == nil {
				o.Size = client.TermSize{Rows: h, Cols: w}
				sizes, stop := watchWindow(int(os.Stdout.Fd()))
				defer stop()
				o.Resize = sizes
			}
		}
		code, err := c.Exec(ctx, args[0], o)
		if err != nil {
			if d, ok := in.(*detacher); ok && d.detached() {
				return errDetached
			}
			return err
		}
		if code != 0 {
			return exitError{code}
		}
		return nil
	})
}

// rawTerminal puts the terminal fd in raw mode and returns how to undo it.
func rawTerminal(fd int) (func(), error) {
	old, err := term.MakeRaw(fd)
	if err != nil {
		return nil, fmt.Errorf("raw terminal: %w", err)
	}
	return func() { _ = term.Restore(fd, old) }, nil
}
