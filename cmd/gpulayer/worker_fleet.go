package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// workerDrainCmd drains a worker: no new task, running ones until the
// deadline, then stopped and requeued without using up an attempt.
func workerDrainCmd() *cobra.Command {
	var deadline time.Duration
	cmd := workerWrite("drain", "give a worker no new task; stop what it still runs at the deadline",
		"  gpulayer worker drain gpu-node-7                 # its tasks get an hour\n  gpulayer worker drain gpu-node-7 --deadline 10m\n  gpulayer worker drain gpu-node-7 --deadline 0     # stop its tasks now, hand them back",
		func(cmd *cobra.Command, c *client.Client, id string) (api.Worker, error) {
			var secs *int
			if cmd.Flags().Changed("deadline") {
				if deadline < 0 || deadline%time.Second != 0 {
					return api.Worker{}, usagef("--deadline %s: want whole seconds, 0 or more", deadline)
				}
				s := int(deadline / time.Second)
				secs = &s
			}
			return c.DrainWorker(cmd.Context(), id, secs)
		},
		func(w api.Worker) {
			if w.DrainDeadline == "" {
				fmt.Fprintf(humanOut, "worker %s: %s; its tasks were told to stop and go back to the queue\n", w.WorkerID, w.Status)
				return
			}
			fmt.Fprintf(humanOut, "worker %s: %s; tasks still running at %s are stopped and go back to the queue\n", w.WorkerID, w.Status, w.DrainDeadline)
		})
	cmd.Flags().DurationVar(&deadline, "deadline", time.Duration(api.DefaultDrainDeadlineSeconds)*time.Second, "how long running tasks may go on")
	return cmd
}

// workerStopCmd stops a worker's tasks now; its agent exits once idle.
func workerStopCmd() *cobra.Command {
	return workerWrite("stop", "stop a worker's tasks now (they go back to the queue); its agent then exits 0",
		"  gpulayer worker stop gpu-node-7",
		func(cmd *cobra.Command, c *client.Client, id string) (api.Worker, error) {
			return c.StopWorker(cmd.Context(), id)
		},
		func(w api.Worker) {
			fmt.Fprintf(humanOut, "worker %s: %s; its tasks were told to stop and go back to the queue\n", w.WorkerID, w.Status)
		})
}

// workerResumeCmd makes a drained or stopped worker ready again.
func workerResumeCmd() *cobra.Command {
	return workerWrite("resume", "make a draining or stopping worker ready again",
		"  gpulayer worker resume gpu-node-7",
		func(cmd *cobra.Command, c *client.Client, id string) (api.Worker, error) {
			return c.ResumeWorker(cmd.Context(), id)
		},
		func(w api.Worker) { fmt.Fprintf(humanOut, "worker %s: %s\n", w.WorkerID, w.Status) })
}

// workerClearGPUCmd asks a worker's agent to put a faulty or quarantined
// GPU back in service.
func workerClearGPUCmd() *cobra.Command {
	return clientLeaf(&cobra.Command{
		Use:     "clear-gpu [flags] WORKER GPU-UUID",
		Short:   "put a GPU its agent took out of service (a fault, a quarantine) back, through its hold-down window",
		Example: "  gpulayer worker clear-gpu gpu-node-7 GPU-5f1c…   # see gpulayer worker status gpu-node-7 for UUIDs",
		Args:    exactArgs(2, "worker id and GPU uuid"),
	}, jsonOnly(), func(cmd *cobra.Command, c *client.Client, args []string, out *outputFlags) error {
		w, err := c.ClearGPU(cmd.Context(), args[0], args[1])
		if err != nil {
			return err
		}
		if out.json {
			return printJSON(w)
		}
		fmt.Fprintf(humanOut, "worker %s: GPU %s will be cleared at its agent's next heartbeat; it returns to service after the hold-down window\n", w.WorkerID, args[1])
		return nil
	})
}

// workerApproveGPUsCmd approves a worker's changed GPU inventory.
func workerApproveGPUsCmd() *cobra.Command {
	return clientLeaf(&cobra.Command{
		Use:     "approve-gpus [flags] WORKER",
		Short:   "offer a worker's GPUs as it reports them now: those new since its inventory was approved, or whose memory changed, get work",
		Example: "  gpulayer worker approve-gpus gpu-node-7   # after checking the GPUs gpulayer worker status shows as awaiting approval",
		Args:    exactArgs(1, "worker id"),
	}, jsonOnly(), func(cmd *cobra.Command, c *client.Client, args []string, out *outputFlags) error {
		before, err := c.Worker(cmd.Context(), args[0])
		if err != nil {
			return err
		}
		w, err := c.ApproveGPUs(cmd.Context(), args[0])
		if err != nil {
			return err
		}
		if out.json {
			return printJSON(w)
		}
		var approved []string
		for _, d := range before.Devices {
			if d.PendingApproval {
				approved = append(approved, d.UUID)
			}
		}
		if len(approved) == 0 {
			fmt.Fprintf(humanOut, "worker %s: no GPU was awaiting approval; its inventory as it stands is approved\n", w.WorkerID)
			return nil
		}
		fmt.Fprintf(humanOut, "worker %s: %d GPU(s) brought into service: %s\n", w.WorkerID, len(approved), strings.Join(approved, ", "))
		return nil
	})
}
