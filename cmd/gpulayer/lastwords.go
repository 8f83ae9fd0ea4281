package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// tailLines is how many of a failed task's last output lines job status
// shows.
const tailLines = 5

// jobView is a job as job status shows it to people: with the last lines
// of output of each task that failed (its last attempt's). As JSON it is
// the job alone, the API's shape.
type jobView struct {
	api.Job
	tails map[string][]string // task id → last lines
}

func (v jobView) MarshalJSON() ([]byte, error) { return json.Marshal(v.Job) }

// fetchJobView reads a job and, when a task of it failed, the end of that
// task's output.
func fetchJobView(ctx context.Context, c *client.Client, id string) (jobView, error) {
	j, err := c.Job(ctx, id)
	if err != nil {
		return jobView{}, err
	}
	v := jobView{Job: j}
	failed := map[string]int{} // task → its last attempt's number
	for _, t := range j.Tasks {
		if t.State == api.TaskFailed {
			failed[t.ID] = t.Attempt
		}
	}
	if len(failed) == 0 {
		return v, nil
	}
	lines := map[string][]string{}
	err = c.Logs(ctx, id, false, func(e api.LogEntry) error {
		if n, ok := failed[e.TaskID]; ok && e.Attempt == n {
			lines[e.TaskID] = lastLines(append(lines[e.TaskID], strings.Split(strings.TrimRight(e.Data, "\n"), "\n")...), tailLines)
		}
		return nil
	})
	if err != nil {
		return v, nil // the job is shown without its output's end
	}
	v.tails = lines
	return v, nil
}

// lastLines keeps the last n of lines.
func lastLines(lines []string, n int) []string {
	if len(lines) > n {
		return lines[len(lines)-n:]
	}
	return lines
}

// printJobView prints the job, then the last lines of each failed task.
func printJobView(w io.Writer, v jobView, wide bool) {
	printJob(w, v.Job, wide)
	for _, t := range v.Job.Tasks {
		if tail := v.tails[t.ID]; len(tail) > 0 {
			fmt.Fprintf(w, "  last output of %s (attempt %d):\n", t.ID, t.Attempt)
			for _, l := range tail {
				fmt.Fprintf(w, "    %s\n", cell(l))
			}
		}
	}
}
