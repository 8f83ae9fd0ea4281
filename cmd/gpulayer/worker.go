package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/spf13/cobra"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

func workerCmd() *cobra.Command {
	return group("worker", "inspect and manage workers (admin)", "  gpulayer worker list\n  gpulayer worker status dev-worker",
		workerListCmd(), workerStatusCmd(), workerReissueCmd(), workerRevokeCmd(), workerApproveCmd(),
		workerDrainCmd(), workerStopCmd(), workerResumeCmd(), workerClearGPUCmd(), workerApproveGPUsCmd(), workerForgetCmd())
}

func workerListCmd() *cobra.Command {
	return readCmd(&cobra.Command{
		Use:     "list [flags]",
		Short:   "list workers",
		Example: "  gpulayer worker list\n  gpulayer worker list -o wide --watch\n  gpulayer worker list -o json",
		Args:    noArgs,
	}, true, func(ctx context.Context, c *client.Client, _ []string) ([]api.Worker, error) {
		return c.Workers(ctx)
	}, workerTable)
}

func workerTable(w io.Writer, ws []api.Worker, wide bool) {
	head := []string{"WORKER", "STATUS", "GPUS", "HEALTHY", "UNHEALTHY", "AWAITING", "EXECUTORS", "RUNNING", "GROUPS", "LAST HEARTBEAT", "REGISTERED"}
	if wide {
		head = append(head, "ORIGIN", "CAPABILITIES", "LABELS")
	}
	row(w, head...)
	for _, x := range ws {
		n := countGPUs(x.Devices)
		cells := []string{x.WorkerID, x.Status, fmt.Sprint(len(x.Devices)), fmt.Sprint(n.healthy), fmt.Sprint(n.unhealthy), fmt.Sprint(n.awaiting),
			commaList(x.Executors), fmt.Sprint(len(x.RunningTasks)),
			commaList(x.Groups), ago(x.LastHeartbeat), ago(x.RegisteredAt)}
		if wide {
			cells = append(cells, dash(x.Origin), commaList(x.Capabilities), labelList(x.Labels))
		}
		row(w, cells...)
	}
}

// labelList renders labels as k=v, sorted by key.
func labelList(l map[string]string) string {
	kv := make([]string, 0, len(l))
	for _, k := range slices.Sorted(maps.Keys(l)) {
		kv = append(kv, k+"="+l[k])
	}
	return commaList(kv)
}

func workerStatusCmd() *cobra.Command {
	return readCmd(&cobra.Command{
		Use:     "status [flags] WORKER",
		Short:   "show one worker",
		Example: "  gpulayer worker status dev-worker\n  gpulayer worker status dev-worker -o json",
		Args:    exactArgs(1, "worker id"),
	}, false, func(ctx context.Context, c *client.Client, args []string) (api.Worker, error) {
		return c.Worker(ctx, args[0])
	}, printWorker)
}

// printWorker is the readable view of one worker.
func printWorker(w io.Writer, x api.Worker, wide bool) {
	origin := dash(x.Origin)
	for _, extra := range []string{x.TokenID, x.InstanceID, x.ClusterKey, x.ExternalWorkerKey} {
		if extra != "" {
			origin += " " + extra
		}
	}
	field := func(k, v string) { fmt.Fprintf(w, "%s:\t%s\n", k, cell(v)) }
	field("worker", x.WorkerID)
	field("status", x.Status)
	field("origin", origin)
	field("registered", when(x.RegisteredAt, wide)+" by "+dash(x.RegisteredBy))
	if x.ApprovedAt != "" || x.ApprovedBy != "" {
		field("approved", when(x.ApprovedAt, wide)+" by "+dash(x.ApprovedBy))
	}
	field("last heartbeat", when(x.LastHeartbeat, wide))
	field("executors", commaList(x.Executors))
	field("capabilities", commaList(x.Capabilities))
	field("groups", commaList(x.Groups))
	field("labels", labelList(x.Labels))
	field("running tasks", commaList(x.RunningTasks))
	field("gpus", fmt.Sprint(len(x.Devices)))
	if len(x.Devices) == 0 {
		return
	}
	fmt.Fprintln(w)
	row(w, "  INDEX", "UUID", "NAME", "MEMORY", "HEALTH", "DRIVER", "CUDA", "COMPUTE", "WHY")
	for _, d := range x.Devices {
		row(w, fmt.Sprintf("  %d", d.Index), d.UUID, d.Name, fmt.Sprintf("%d MiB", d.MemoryMiB), deviceHealth(d),
			dash(d.DriverVersion), dash(d.CUDAVersion), dash(d.ComputeCapability), dash(d.HealthReason))
	}
}

// deviceHealth is a device's health as a word: its reported state, or,
// from an agent that does not watch health, whether it is offered.
func deviceHealth(d api.Device) string {
	switch {
	case d.PendingApproval:
		return "awaiting-approval"
	case d.Cordoned:
		return "cordoned"
	case d.Health != "":
		return d.Health
	case d.Healthy:
		return api.HealthHealthy
	}
	return api.HealthUnhealthy
}
