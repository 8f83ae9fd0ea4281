package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
)

func workerList(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("worker list", flag.ContinueOnError)
	var cf clientFlags
	cf.register(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	ws, err := c.Workers(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(ws)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKER\tSTATUS\tGPUS\tEXECUTORS\tRUNNING\tGROUPS\tREGISTERED")
	for _, w := range ws {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%v\t%d\t%s\t%s\n", w.WorkerID, w.Status, len(w.Devices), w.Executors, len(w.RunningTasks), dash(strings.Join(w.Groups, ",")), w.RegisteredAt)
	}
	return tw.Flush()
}

func workerStatus(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("worker status", flag.ContinueOnError)
	var cf clientFlags
	cf.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	id, err := oneArg(fs, "worker id")
	if err != nil {
		return err
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	w, err := c.Worker(ctx, id)
	if err != nil {
		return err
	}
	return printJSON(w)
}
