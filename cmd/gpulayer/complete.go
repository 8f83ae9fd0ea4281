package main

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpulayer/gpulayer/sdk/client"
)

// Shell completion of the ids a command takes: a client command whose
// first argument is JOB or WORKER (its Use says so) completes it with the
// ids the coordinators list, asked with the command's own address, token
// and profile. It is bounded (completeLimit ids, completeTimeout) and
// silent: a coordinator that does not answer, or refuses, completes
// nothing, and the shell falls back to no suggestion.

const (
	completeLimit   = 200
	completeTimeout = 2 * time.Second
)

// idKind is what the first argument of cmd names: "JOB", "WORKER" or "".
func idKind(cmd *cobra.Command) string {
	for _, w := range strings.Fields(cmd.Use)[1:] {
		if strings.HasPrefix(w, "[") {
			continue
		}
		if w == "JOB" || w == "WORKER" {
			return w
		}
		return ""
	}
	return ""
}

// completeIDs is the ValidArgsFunction of a command whose first argument
// idKind names; connect makes its client.
func completeIDs(kind string, connect func(*cobra.Command) (*client.Client, error)) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		none := cobra.ShellCompDirectiveNoFileComp
		if len(args) > 0 {
			return nil, none
		}
		// Completion skips the pre-run that reads the environment.
		if err := bindEnv(cmd.Flags()); err != nil {
			return nil, none
		}
		c, err := connect(cmd)
		if err != nil {
			return nil, none
		}
		ctx, cancel := context.WithTimeout(context.Background(), completeTimeout)
		defer cancel()
		var ids [][2]string // id, description
		switch kind {
		case "JOB":
			jobs, err := c.Jobs(ctx, completeLimit)
			if err != nil {
				return nil, none
			}
			for _, j := range jobs {
				ids = append(ids, [2]string{j.ID, strings.TrimSpace(j.State + " " + j.Name)})
			}
		case "WORKER":
			workers, err := c.Workers(ctx)
			if err != nil {
				return nil, none
			}
			for _, w := range workers[:min(len(workers), completeLimit)] {
				ids = append(ids, [2]string{w.WorkerID, w.Status})
			}
		}
		var out []string
		for _, id := range ids {
			// A job's name is anyone's text: no control reaches the shell.
			if strings.HasPrefix(id[0], toComplete) {
				out = append(out, cell(id[0])+"\t"+cell(id[1]))
			}
		}
		return out, none
	}
}
