package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// workerForgetCmd forgets a dead, revoked or never approved worker: it
// leaves `worker list`, the dashboard and the GPU counts; the audit log
// keeps it.
func workerForgetCmd() *cobra.Command {
	return workerWrite("forget", "forget a revoked, offline or unapproved worker that holds no task (the audit log keeps it)",
		"  gpulayer worker revoke gpu-node-7 && gpulayer worker forget gpu-node-7",
		func(cmd *cobra.Command, c *client.Client, id string) (api.Worker, error) {
			return c.ForgetWorker(cmd.Context(), id)
		},
		func(w api.Worker) {
			fmt.Fprintf(humanOut, "worker %s forgotten (it was %s, with %d GPUs); the audit log keeps it\n", w.WorkerID, w.Status, len(w.Devices))
		})
}
