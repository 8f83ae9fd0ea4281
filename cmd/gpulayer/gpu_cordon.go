package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// gpuCordonCmd cordons one GPU of a worker: no new task on it.
func gpuCordonCmd() *cobra.Command {
	var reason string
	cmd := gpuCordonLeaf("cordon", "give a GPU no new task (what runs on it goes on), with a reason shown on its record (audited)",
		"  gpulayer gpu cordon gpu-node-7 GPU-5f1c… --reason 'fan noise'   # see gpulayer gpu list for UUIDs",
		func(cmd *cobra.Command, c *client.Client, worker, uuid string) (api.Worker, error) {
			return c.CordonGPU(cmd.Context(), worker, uuid, reason)
		}, "cordoned: it takes no new task")
	cmd.Flags().StringVar(&reason, "reason", "", "why, shown on the GPU's record and in the audit log")
	return cmd
}

// gpuDrainCmd drains one GPU of a worker: cordoned, its tasks stopped
// and requeued without using an attempt.
func gpuDrainCmd() *cobra.Command {
	var reason string
	cmd := gpuCordonLeaf("drain", "cordon a GPU and stop the tasks on it: they are requeued elsewhere without using an attempt (audited); uncordon it to offer it again",
		"  gpulayer gpu drain gpu-node-7 GPU-5f1c… --reason 'reset for pending page retirement'",
		func(cmd *cobra.Command, c *client.Client, worker, uuid string) (api.Worker, error) {
			return c.DrainGPU(cmd.Context(), worker, uuid, reason)
		}, "drained: cordoned, and its tasks told to stop and requeued")
	cmd.Flags().StringVar(&reason, "reason", "", "why, shown on the GPU's record, in the tasks' attempts and in the audit log")
	return cmd
}

// gpuUncordonCmd lifts a GPU's cordon.
func gpuUncordonCmd() *cobra.Command {
	return gpuCordonLeaf("uncordon", "offer a cordoned GPU again (audited)",
		"  gpulayer gpu uncordon gpu-node-7 GPU-5f1c…",
		func(cmd *cobra.Command, c *client.Client, worker, uuid string) (api.Worker, error) {
			return c.UncordonGPU(cmd.Context(), worker, uuid)
		}, "offered again")
}

func gpuCordonLeaf(verb, short, example string, call func(*cobra.Command, *client.Client, string, string) (api.Worker, error), done string) *cobra.Command {
	return clientLeaf(&cobra.Command{
		Use:     verb + " [flags] WORKER GPU-UUID",
		Short:   short,
		Example: example,
		Args:    exactArgs(2, "worker id and GPU uuid"),
	}, jsonOnly(), func(cmd *cobra.Command, c *client.Client, args []string, out *outputFlags) error {
		w, err := call(cmd, c, args[0], args[1])
		if err != nil {
			return err
		}
		if out.json {
			return printJSON(w)
		}
		fmt.Fprintf(humanOut, "worker %s: GPU %s %s\n", w.WorkerID, args[1], gpuNow(w, args[1], done))
		return nil
	})
}

// gpuNow is done, unless the GPU as the answer shows it says otherwise:
// an uncordoned GPU that is still not offered (unhealthy, awaiting
// approval, on a draining worker) says why not.
func gpuNow(w api.Worker, uuid, done string) string {
	for _, d := range w.Devices {
		if d.UUID == uuid && !d.Cordoned && !d.Healthy {
			return "uncordoned; not offered: " + dash(d.HealthReason)
		}
	}
	return done
}
