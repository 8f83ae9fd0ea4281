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

func jobEventsCmd() *cobra.Command {
	return readCmd(&cobra.Command{
		Use:   "events [flags] JOB",
		Short: "show a job's history: submission, attempts, preemptions, checkpoints, cancellation",
		Long: `events lists a job's events, oldest first: its submission, each attempt's
assignment, start, preemption (by which job and team) and end (with its
outcome and reason), the checkpoints it saved, and its cancellation.`,
		Example: "  gpulayer job events j0001\n  gpulayer job events j0001 -o json",
		Args:    exactArgs(1, "job id"),
	}, true, func(ctx context.Context, c *client.Client, args []string) (api.JobEvents, error) {
		return c.JobEvents(ctx, args[0])
	}, printJobEvents)
}

func printJobEvents(w io.Writer, evs api.JobEvents, wide bool) {
	if evs.Truncated {
		fmt.Fprintf(w, "(older events left out: the latest %d are shown)\n", len(evs.Events))
	}
	fmt.Fprintln(w, "TIME\tEVENT\tTASK\tATTEMPT\tDETAIL")
	for _, e := range evs.Events {
		task, attempt := "-", "-"
		if e.TaskIndex != nil {
			task = fmt.Sprintf("%d (%s)", *e.TaskIndex, e.TaskID)
		}
		if e.Attempt != nil {
			attempt = fmt.Sprintf("%d", e.Attempt.Number)
		}
		row(w, when(e.Time, wide), e.Kind, task, attempt, eventDetail(e))
	}
}

// eventDetail says in a few words what an event's fields hold.
func eventDetail(e api.JobEvent) string {
	var parts []string
	add := func(format string, a ...any) { parts = append(parts, fmt.Sprintf(format, a...)) }
	if e.By != "" {
		add("by %s (team %s)", e.By, e.Team)
	}
	for _, d := range e.DependsOn {
		add("waits for job %s %s", d.Job, d.Condition)
	}
	if a := e.Attempt; a != nil {
		if e.Kind == api.EventAttemptAssigned {
			add("worker %s %s", a.WorkerID, strings.Join(a.Devices, ","))
		}
		if a.Outcome != "" {
			add("%s", a.Outcome)
		}
		if a.ExitCode != nil {
			add("exit %d", *a.ExitCode)
		}
	}
	if p := e.PreemptedBy; p != nil && e.Kind == api.EventAttemptPreempted {
		add("by job %s (team %s) for its task %s", p.JobID, p.Team, p.TaskID)
	}
	if p := e.Preflight; p != nil {
		add("preflight %s: %d checks, %d skipped, %d ms of %d", p.Outcome, p.Checks, p.Skipped, p.DurationMS, p.BoundMS)
		if p.Failed != "" {
			add("%s", p.Failed)
		}
	}
	if c := e.Checkpoint; c != nil {
		add("%s %d bytes sha256:%s", c.Format, c.Size, c.SHA256)
	}
	if e.Attempt != nil && e.Attempt.Reason != "" {
		add("%s", e.Attempt.Reason)
	}
	if e.Reason != "" {
		add("%s", e.Reason)
	}
	return strings.Join(parts, "; ")
}
