package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// gpuCmd is the fleet's GPU view: which GPU runs what.
func gpuCmd() *cobra.Command {
	return group("gpu", "see the fleet's GPUs and what runs on each, cordon, drain or repartition one (admin)", "  gpulayer gpu list\n  gpulayer gpu list --worker gpu-node-7 -o wide\n  gpulayer gpu cordon gpu-node-7 GPU-5f1c… --reason 'fan noise'\n  gpulayer gpu drain gpu-node-7 GPU-5f1c… --reason 'reset'\n  gpulayer gpu mig gpu-node-7 GPU-5f1c… 3g.40gb,3g.40gb",
		gpuListCmd(), gpuCordonCmd(), gpuUncordonCmd(), gpuDrainCmd(), gpuMIGCmd())
}

func gpuListCmd() *cobra.Command {
	var worker string
	cmd := readCmd(&cobra.Command{
		Use:     "list [flags]",
		Short:   "list every GPU of every worker: health, MIG, and the task that runs on it, or free",
		Example: "  gpulayer gpu list\n  gpulayer gpu list --worker gpu-node-7\n  gpulayer gpu list -o json --watch",
		Args:    noArgs,
	}, true, func(ctx context.Context, c *client.Client, _ []string) ([]api.GPU, error) {
		return c.GPUs(ctx, worker)
	}, gpuTable)
	cmd.Flags().StringVar(&worker, "worker", "", "only this worker's GPUs")
	return cmd
}

// gpuTable prints one row per GPU, then the fleet's counts.
func gpuTable(w io.Writer, gs []api.GPU, wide bool) {
	head := []string{"WORKER", "INDEX", "UUID", "MODEL", "MIG", "HEALTH", "RUNS", "MEMORY", "SHARE", "WHY"}
	if wide {
		head = append(head, "WORKER STATUS", "ATTEMPTS")
	}
	row(w, head...)
	devs := make([]api.Device, len(gs))
	busy := 0
	for i, g := range gs {
		devs[i] = g.Device
		if len(g.Tasks) > 0 {
			busy++
		}
		cells := []string{g.WorkerID, fmt.Sprint(g.Index), g.UUID, g.Name, migCell(g.Device), deviceHealth(g.Device), runsCell(g),
			fmt.Sprintf("%d MiB", g.MemoryMiB), shareCell(g), dash(g.HealthReason)}
		if wide {
			attempts := make([]string, len(g.Tasks))
			for j, t := range g.Tasks {
				attempts[j] = t.AttemptID
			}
			cells = append(cells, g.WorkerStatus, commaList(attempts))
		}
		row(w, cells...)
	}
	n := countGPUs(devs)
	cordoned := ""
	if n.cordoned > 0 {
		cordoned = fmt.Sprintf(" (%d of them cordoned)", n.cordoned)
	}
	fmt.Fprintf(w, "%d GPUs: %d healthy, %d unhealthy%s, %d awaiting approval; %d in use\n", len(gs), n.healthy, n.unhealthy, cordoned, n.awaiting, busy)
}

// migCell names a MIG device's parent and profile, or says a GPU is in
// MIG mode.
func migCell(d api.Device) string {
	switch {
	case d.Parent != "":
		return d.MIGProfile + " of " + d.Parent
	case d.MIGEnabled:
		return "mig mode"
	}
	return "-"
}

// runsCell names the job/task on a GPU, or says it is free.
func runsCell(g api.GPU) string {
	if len(g.Tasks) == 0 {
		if g.Use == api.GPUMIG {
			return "(its MIG devices)"
		}
		return "free"
	}
	runs := make([]string, len(g.Tasks))
	for i, t := range g.Tasks {
		runs[i] = t.JobID + "/" + t.TaskID
	}
	return strings.Join(runs, ",")
}

// shareCell says how much of a GPU is held: whole, or the shares' sum.
func shareCell(g api.GPU) string {
	switch g.Use {
	case api.GPUWhole:
		return "whole"
	case api.GPUShared:
		return fmt.Sprintf("%d/%d MiB", g.SharedMiB, g.MemoryMiB)
	}
	return "-"
}
