package main

import (
	"context"
	"flag"
	"fmt"
	"os"
)

// workerReissue prints a worker's new credential. It is shown once: the
// coordinator keeps only its hash.
func workerReissue(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("worker reissue", flag.ContinueOnError)
	var cf clientFlags
	cf.register(fs)
	asJSON := fs.Bool("json", false, "print JSON")
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
	out, err := c.ReissueWorker(ctx, id)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(out)
	}
	fmt.Fprintf(os.Stderr, "worker %s has a new credential; the old one no longer works. It is shown only now:\n", out.WorkerID)
	fmt.Println(out.WorkerToken)
	fmt.Fprintf(os.Stderr, "put it in the agent's worker-credential.json as {\"worker_id\":%q,\"worker_token\":\"…\"}\n", out.WorkerID)
	return nil
}

// workerRevoke revokes a worker for good.
func workerRevoke(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("worker revoke", flag.ContinueOnError)
	var cf clientFlags
	cf.register(fs)
	asJSON := fs.Bool("json", false, "print JSON")
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
	w, err := c.RevokeWorker(ctx, id)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(w)
	}
	fmt.Printf("worker %s: %s (its tasks were handed back to the queue)\n", w.WorkerID, w.Status)
	return nil
}

// workerApprove lets a pending worker take work.
func workerApprove(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("worker approve", flag.ContinueOnError)
	var cf clientFlags
	cf.register(fs)
	asJSON := fs.Bool("json", false, "print JSON")
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
	w, err := c.ApproveWorker(ctx, id)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(w)
	}
	fmt.Printf("worker %s: %s\n", w.WorkerID, w.Status)
	return nil
}
