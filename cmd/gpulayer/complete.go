package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpulayer/gpulayer/sdk/client"
)

// Shell completion of the ids a command takes: a client command whose
// first argument is JOB or WORKER (its Use says so) completes it with the
// ids the coordinators list, and job submit --target and job logs --task
// complete their values, each asked with the command's own address, token
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

// connectFunc makes a command's client from its flags.
type connectFunc func(*cobra.Command) (*client.Client, error)

// connectFromFlags makes the client of any command that registered the
// client flags, from their values.
func connectFromFlags(cmd *cobra.Command) (*client.Client, error) {
	fs := cmd.Flags()
	var cf clientFlags
	for name, dst := range map[string]*string{
		"addr": &cf.addr, "token": &cf.token, "ca-file": &cf.caFile,
		"client-cert": &cf.clientCert, "client-key": &cf.clientKey, "profile": &cf.profile,
	} {
		if f := fs.Lookup(name); f != nil {
			*dst = f.Value.String()
		}
	}
	return cf.client(fs)
}

// lister lists completions (a value and its description) for a command
// given its arguments so far.
type lister func(ctx context.Context, c *client.Client, args []string) ([][2]string, error)

// completion is a completion function listing with list; it offers the
// values that start with what is typed.
func completion(connect connectFunc, list lister) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		none := cobra.ShellCompDirectiveNoFileComp
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
		items, err := list(ctx, c, args)
		if err != nil {
			return nil, none
		}
		var out []string
		for _, it := range items[:min(len(items), completeLimit)] {
			// A job's name is anyone's text: no control reaches the shell.
			if strings.HasPrefix(it[0], toComplete) {
				out = append(out, cell(it[0])+"\t"+cell(it[1]))
			}
		}
		return out, none
	}
}

// completeIDs completes the first argument of a command that idKind
// names.
func completeIDs(kind string, connect connectFunc) cobra.CompletionFunc {
	list := listWorkers
	if kind == "JOB" {
		list = listJobs
	}
	return completion(connect, func(ctx context.Context, c *client.Client, args []string) ([][2]string, error) {
		if len(args) > 0 {
			return nil, nil
		}
		return list(ctx, c, args)
	})
}

func listJobs(ctx context.Context, c *client.Client, _ []string) ([][2]string, error) {
	jobs, err := c.Jobs(ctx, completeLimit)
	var out [][2]string
	for _, j := range jobs {
		out = append(out, [2]string{j.ID, strings.TrimSpace(j.State + " " + j.Name)})
	}
	return out, err
}

func listWorkers(ctx context.Context, c *client.Client, _ []string) ([][2]string, error) {
	workers, err := c.Workers(ctx)
	var out [][2]string
	for _, w := range workers {
		out = append(out, [2]string{w.WorkerID, w.Status})
	}
	return out, err
}

// listTargets lists job submit --target's values: worker:ID and group:ID
// (each list only when the token may read it).
func listTargets(ctx context.Context, c *client.Client, _ []string) ([][2]string, error) {
	var out [][2]string
	workers, werr := listWorkers(ctx, c, nil)
	for _, w := range workers {
		out = append(out, [2]string{"worker:" + w[0], w[1]})
	}
	groups, gerr := c.Groups(ctx)
	for _, g := range groups {
		out = append(out, [2]string{"group:" + g.GroupID, "group"})
	}
	if werr != nil && gerr != nil {
		return nil, werr
	}
	return out, nil
}

// listTasks lists job logs --task's values: the indices of the job named
// first.
func listTasks(ctx context.Context, c *client.Client, args []string) ([][2]string, error) {
	if len(args) == 0 {
		return nil, nil
	}
	job, err := c.Job(ctx, args[0])
	var out [][2]string
	for _, t := range job.Tasks {
		out = append(out, [2]string{fmt.Sprint(t.Index), t.ID + " " + t.State})
	}
	return out, err
}
