package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"
)

// watchFlags is --watch on a read command: render again every interval
// until interrupted.
type watchFlags struct {
	on    bool
	every time.Duration
}

func (w *watchFlags) register(fs *pflag.FlagSet) {
	fs.BoolVarP(&w.on, "watch", "w", false, "render again every --watch-interval until interrupted (with -o json: one JSON document a line per refresh)")
	fs.DurationVar(&w.every, "watch-interval", 2*time.Second, "time between two renders of --watch")
}

// run calls show once, or with --watch until ctx ends (then it returns
// nil: Ctrl-C is how a watch ends). A first failure ends the watch; later
// ones are reported on stderr and the watch goes on.
func (w *watchFlags) run(ctx context.Context, out *outputFlags, show func(context.Context) error) error {
	if !w.on {
		return show(ctx)
	}
	if w.every <= 0 {
		return usagef("--watch-interval must be positive, got %s", w.every)
	}
	out.stream = true
	cls := !out.is(formatJSON) && isTerminal(os.Stdout)
	tick := time.NewTicker(w.every)
	defer tick.Stop()
	for n := 0; ; n++ {
		switch {
		case cls:
			fmt.Print("\033[H\033[2J")
		case n > 0 && !out.is(formatJSON):
			fmt.Fprintln(humanOut)
		}
		err := show(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			if n == 0 {
				return err
			}
			fmt.Fprintln(humanErr, "gpulayer:", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// isTerminal says whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
