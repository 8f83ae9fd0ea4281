package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
)

func workerList(ctx context.Context, args []string) error {
	fs := newClientCmd("worker list")
	asJSON := fs.Bool("json", false, "print JSON")
	c, _, err := fs.connect(args, -1, "")
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
	fs := newClientCmd("worker status")
	c, pos, err := fs.connect(args, 1, "worker id")
	if err != nil {
		return err
	}
	id := pos[0]
	w, err := c.Worker(ctx, id)
	if err != nil {
		return err
	}
	return printJSON(w)
}
