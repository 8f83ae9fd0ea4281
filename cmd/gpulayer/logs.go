package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// maxTail bounds --tail: the lines are held in memory until the end.
const maxTail = 100000

// logsOptions are the flags of job logs.
type logsOptions struct {
	follow, noPrefix bool
	task, since      string
	tail             int // -1: all
	out              logOutput
}

// jobLogs prints job id's output as o asks (logview.go).
func jobLogs(ctx context.Context, c *client.Client, id string, o logsOptions) error {
	if o.tail < -1 || o.tail > maxTail {
		return usagef("--tail %d: want 0 … %d lines", o.tail, maxTail)
	}
	var since time.Time
	if o.since != "" {
		var err error
		if since, err = parseSince(o.since, time.Now()); err != nil {
			return err
		}
	}
	job, err := c.Job(ctx, id)
	if err != nil {
		return err
	}
	if o.task != "" && !hasTask(job, o.task) {
		return usagef("job %s has no task %q (give a task id or index, 0 … %d)", job.ID, o.task, len(job.Tasks)-1)
	}
	printed := 0
	show := func(l logLine) error {
		printed++
		f := os.Stdout
		if l.stream == api.StreamStderr {
			f = os.Stderr
		}
		return o.out.write(f, l.text)
	}
	v := newLogView(show)
	v.task, v.since, v.noPrefix = o.task, since, o.noPrefix
	v.prefix = !o.noPrefix && multiRun(job)

	if o.tail < 0 {
		if err := c.Logs(ctx, id, o.follow, v.add); err != nil {
			return err
		}
	} else {
		// The last lines of what is there now; then, following, the rest,
		// skipping per task the entries already read (a task's entries
		// only grow at the end).
		tail := &lineRing{n: o.tail}
		v.emit = tail.add
		read := map[string]int{}
		err := c.Logs(ctx, id, false, func(e api.LogEntry) error {
			read[e.TaskID]++
			return v.add(e)
		})
		if err != nil {
			return err
		}
		if !o.follow {
			if err := v.flush(); err != nil {
				return err
			}
		}
		v.emit = show
		if err := tail.each(show); err != nil {
			return err
		}
		if o.follow {
			skipped := map[string]int{}
			err := c.Logs(ctx, id, true, func(e api.LogEntry) error {
				if skipped[e.TaskID] < read[e.TaskID] {
					skipped[e.TaskID]++
					return nil
				}
				return v.add(e)
			})
			if err != nil {
				return err
			}
		}
	}
	if err := v.flush(); err != nil || printed > 0 {
		return err
	}
	// Nothing to show: say so, and why the job ended if it did not
	// succeed, rather than exit in silence.
	if job, err = c.Job(ctx, id); err != nil {
		return err
	}
	fmt.Fprintf(humanErr, "job %s (%s) has no output%s\n", job.ID, job.State, filtered(o))
	printReasons(humanErr, job)
	return nil
}

// filtered says which filters left nothing, for the "no output" line.
func filtered(o logsOptions) string {
	s := ""
	if o.task != "" {
		s += " from task " + o.task
	}
	if o.since != "" {
		s += " since " + o.since
	}
	return s
}

// hasTask reports whether job has a task of that id or index.
func hasTask(job api.Job, task string) bool {
	for _, t := range job.Tasks {
		if t.ID == task || fmt.Sprint(t.Index) == task {
			return true
		}
	}
	return false
}

// multiRun reports whether job's output comes from more than one task or
// attempt, so that its lines need saying whose they are.
func multiRun(job api.Job) bool {
	if len(job.Tasks) > 1 {
		return true
	}
	for _, t := range job.Tasks {
		if t.Attempt > 1 {
			return true
		}
	}
	return false
}

// waitPrinter prints the output job submit --wait streams; flush prints
// what is held once the stream ends. A job of many tasks prints as job
// logs does (whole lines, each with its task and attempt); a job of one
// task prints its bytes as they come, so a progress bar moves, and says
// on stderr when the task starts again.
func waitPrinter(job api.Job) (add func(api.LogEntry) error, flush func() error) {
	var out logOutput
	if len(job.Tasks) > 1 {
		v := newLogView(func(l logLine) error {
			f := os.Stdout
			if l.stream == api.StreamStderr {
				f = os.Stderr
			}
			return out.write(f, l.text)
		})
		v.prefix = true
		return v.add, v.flush
	}
	last := 0
	return func(e api.LogEntry) error {
		if last != 0 && e.Attempt != last {
			fmt.Fprintf(humanErr, "job %s: task %s starts again, attempt %d\n", job.ID, e.TaskID, e.Attempt)
		}
		last = e.Attempt
		return out.printLog(e)
	}, func() error { return nil }
}
