package main

import (
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

func queueCmd() *cobra.Command {
	var team string
	var limit int
	out := &outputFlags{}
	cmd := clientLeaf(&cobra.Command{
		Use:   "queue [flags]",
		Short: "The order the scheduler serves, per team, with each task's reason (-o table|json)",
		Long: `queue prints the teams with queued tasks in the order the scheduler
serves them (lowest GPUs in use / weight first), and each team's first
tasks in the order it takes them (higher priority, then older), with why
each waits: its team's quota, fair share behind another team, GPUs held
for a larger task, or (empty) only for a GPU to free up. A client token
sees its own team; an admin every team, or --team.`,
		Example: "  gpulayer queue\n  gpulayer queue --team vision --limit 200 -o json",
		Args:    noArgs,
	}, out, func(cmd *cobra.Command, c *client.Client, _ []string, out *outputFlags) error {
		if limit < 0 || limit > api.MaxQueueLimit {
			return usagef("--limit must be from 1 to %d", api.MaxQueueLimit)
		}
		q, err := c.Queue(cmd.Context(), team, limit)
		if err != nil {
			return err
		}
		return out.print(q, func(w io.Writer, wide bool) { queueTable(w, q) })
	})
	fs := cmd.Flags()
	fs.StringVar(&team, "team", "", "one team (default: a client's own, an admin's every team)")
	fs.IntVar(&limit, "limit", 0, "tasks listed per team (default: the server's, 50)")
	return cmd
}

// queueTable prints one row per task, teams in order, with the team's
// figures on its rows.
func queueTable(w io.Writer, q api.QueueResponse) {
	row(w, "TEAM", "IN USE", "WEIGHT", "QUOTA", "QUEUED", "POS", "TASK", "PRIORITY", "GPUS", "REASON")
	for _, t := range q.Teams {
		figures := []string{t.Team, gpuText(t.GPUsInUse), gpuText(t.Weight), quotaText(t), strconv.Itoa(t.Queued)}
		if len(t.Tasks) == 0 {
			row(w, append(figures, "-", "-", "-", "-", "-")...)
		}
		for _, k := range t.Tasks {
			gpus := gpuText(k.GPUs)
			if k.Gang {
				gpus += " (gang)"
			}
			row(w, append(figures, strconv.Itoa(k.Position), k.TaskID, strconv.Itoa(k.Priority), gpus, dash(k.Reason))...)
		}
	}
}

func gpuText(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// quotaText is "quota+borrow limit", "+∞" without a bound.
func quotaText(t api.QueueTeam) string {
	borrow := "∞"
	if t.BorrowLimit != nil {
		borrow = gpuText(t.BorrowLimit.GPUs)
	}
	return gpuText(t.Quota.GPUs) + "+" + borrow
}
