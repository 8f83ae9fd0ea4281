package main

import (
	"context"
	"fmt"
	"os"
)

// workerReissue prints a worker's new credential. It is shown once: the
// coordinator keeps only its hash.
func workerReissue(ctx context.Context, args []string) error {
	fs := newClientCmd("worker reissue")
	asJSON := fs.Bool("json", false, "print JSON")
	c, pos, err := fs.connect(args, 1, "worker id")
	if err != nil {
		return err
	}
	id := pos[0]
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
	fs := newClientCmd("worker revoke")
	asJSON := fs.Bool("json", false, "print JSON")
	c, pos, err := fs.connect(args, 1, "worker id")
	if err != nil {
		return err
	}
	id := pos[0]
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
	fs := newClientCmd("worker approve")
	asJSON := fs.Bool("json", false, "print JSON")
	c, pos, err := fs.connect(args, 1, "worker id")
	if err != nil {
		return err
	}
	id := pos[0]
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
