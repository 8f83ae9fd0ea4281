package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// whyPoll is how often `job submit --wait` looks at a job that has not
// started, to say why it waits.
const whyPoll = 2 * time.Second

// sayWhyItWaits prints, while ctx lasts, why the job's pending tasks
// wait whenever that changes (a job no live worker can take would
// otherwise wait in silence).
func sayWhyItWaits(ctx context.Context, c *client.Client, jobID string, w io.Writer) {
	said := ""
	t := time.NewTicker(whyPoll)
	defer t.Stop()
	for {
		if j, err := c.Job(ctx, jobID); err == nil {
			why := pendingWhy(j)
			if why != said && why != "" {
				fmt.Fprintf(w, "job %s waits: %s\n", cell(jobID), cell(why))
			}
			said = why
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// pendingWhy is the first pending reason among a job's tasks.
func pendingWhy(j api.Job) string {
	for _, t := range j.Tasks {
		if t.PendingReason != "" {
			return t.PendingReason
		}
	}
	return ""
}
