package main

import (
	"fmt"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
	"github.com/spf13/cobra"
)

// workerWrite is a command that changes one worker, named by its one
// argument, and prints the answer as JSON with --json or with human.
func workerWrite[T any](use, short, example string, call func(*cobra.Command, *client.Client, string) (T, error), human func(T)) *cobra.Command {
	return clientLeaf(&cobra.Command{
		Use:     use + " [flags] WORKER",
		Short:   short,
		Example: example,
		Args:    exactArgs(1, "worker id"),
	}, jsonOnly(), func(cmd *cobra.Command, c *client.Client, args []string, out *outputFlags) error {
		v, err := call(cmd, c, args[0])
		if err != nil {
			return err
		}
		if out.json {
			return printJSON(v)
		}
		human(v)
		return nil
	})
}

// workerReissueCmd prints a worker's new credential. It is shown once:
// the coordinator keeps only its hash.
func workerReissueCmd() *cobra.Command {
	return workerWrite("reissue", "give a worker a new credential (the old one dies); it is printed once",
		"  gpulayer worker reissue gpu-node-7 > new-credential",
		func(cmd *cobra.Command, c *client.Client, id string) (api.ReissueResponse, error) {
			return c.ReissueWorker(cmd.Context(), id)
		},
		func(out api.ReissueResponse) {
			fmt.Fprintf(humanErr, "worker %s has a new credential; the old one no longer works. It is shown only now:\n", out.WorkerID)
			fmt.Fprintln(humanOut, out.WorkerToken)
			fmt.Fprintf(humanErr, "put it in the agent's worker-credential.json as {\"worker_id\":%q,\"worker_token\":\"…\"}\n", out.WorkerID)
		})
}

// workerRevokeCmd revokes a worker for good.
func workerRevokeCmd() *cobra.Command {
	return workerWrite("revoke", "revoke a worker for good; its tasks are requeued", "  gpulayer worker revoke gpu-node-7",
		func(cmd *cobra.Command, c *client.Client, id string) (api.Worker, error) {
			return c.RevokeWorker(cmd.Context(), id)
		},
		func(w api.Worker) {
			fmt.Fprintf(humanOut, "worker %s: %s (its tasks were handed back to the queue)\n", w.WorkerID, w.Status)
		})
}

// workerApproveCmd lets a pending worker take work.
func workerApproveCmd() *cobra.Command {
	return workerWrite("approve", "let a pending worker take work", "  gpulayer worker approve gpu-node-7",
		func(cmd *cobra.Command, c *client.Client, id string) (api.Worker, error) {
			return c.ApproveWorker(cmd.Context(), id)
		},
		func(w api.Worker) { fmt.Fprintf(humanOut, "worker %s: %s\n", w.WorkerID, w.Status) })
}
