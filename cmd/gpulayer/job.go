package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/gpulayer/gpulayer/sdk/api"
)

func jobSubmit(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("job submit", flag.ContinueOnError)
	var cf clientFlags
	cf.register(fs)
	var spec api.JobSpec
	var gpus int
	var configJSON, target string
	wait := fs.Bool("wait", false, "stream the logs and exit with the task's result")
	asJSON := fs.Bool("json", false, "print the job as JSON")
	fs.StringVar(&spec.Executor, "executor", "exec", "executor plugin")
	fs.StringVar(&spec.Name, "name", "", "job name")
	fs.IntVar(&gpus, "gpus", 0, "GPUs per task")
	fs.IntVar(&spec.Count, "count", 1, "number of tasks")
	fs.IntVar(&spec.TimeoutSeconds, "timeout", 0, "task timeout in seconds (0: none)")
	fs.IntVar(&spec.MaxAttempts, "max-attempts", 0, "attempts per task (default 3)")
	fs.IntVar(&spec.LeaseSeconds, "lease", 0, "lease seconds (default 30)")
	fs.IntVar(&spec.Priority, "priority", 0, "priority (higher runs first)")
	fs.StringVar(&spec.IdempotencyKey, "idempotency-key", "", "submit at most once under this key")
	fs.StringVar(&configJSON, "config", "", "executor config as JSON (instead of a command after --)")
	fs.StringVar(&target, "target", "", "run only on worker:ID or on a member of group:ID")
	fs.StringVar(&spec.Capability, "capability", "", "capability a worker must offer to take the tasks")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if target != "" {
		ref, err := parseRef("--target", target)
		if err != nil {
			return err
		}
		spec.Target = &api.Target{Kind: ref.Kind, ID: ref.ID}
	}
	if gpus > 0 {
		spec.Resources = &api.Resources{GPUs: gpus}
	}
	rest := fs.Args()
	switch {
	case configJSON != "" && len(rest) > 0:
		return fmt.Errorf("give either --config or a command after --, not both")
	case configJSON != "":
		spec.Config = json.RawMessage(configJSON)
	case len(rest) > 0:
		b, _ := json.Marshal(api.ExecConfig{Command: rest[0], Args: rest[1:]})
		spec.Config = b
	default:
		return fmt.Errorf("nothing to run: give a command after -- (or --config)")
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	job, err := c.SubmitJob(ctx, spec)
	if err != nil {
		return err
	}
	if !*wait {
		if *asJSON {
			return printJSON(job)
		}
		fmt.Println(job.ID)
		return nil
	}
	fmt.Fprintf(os.Stderr, "job %s submitted; streaming its logs\n", job.ID)
	if err := c.Logs(ctx, job.ID, true, printLog); err != nil {
		return err
	}
	job, err = c.Job(ctx, job.ID)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "job %s %s\n", job.ID, job.State)
	printReasons(os.Stderr, job)
	return exitFor(job)
}

// printReasons says, for each task of an unsuccessful job that did not
// succeed, why, in the coordinator's words.
func printReasons(w io.Writer, job api.Job) {
	if job.State == api.TaskSucceeded {
		return
	}
	for _, t := range job.Tasks {
		if t.State == api.TaskSucceeded || t.Reason == "" {
			continue
		}
		fmt.Fprintf(w, "  task %s %s on attempt %d: %s\n", t.ID, t.State, t.Attempt, t.Reason)
	}
}

// exitFor turns a finished job into the CLI's exit status: 0 on success,
// the first failing task's exit code, or 1.
func exitFor(job api.Job) error {
	if job.State == api.TaskSucceeded {
		return nil
	}
	for _, t := range job.Tasks {
		if t.State != api.TaskSucceeded && t.ExitCode != nil && *t.ExitCode != 0 {
			return exitError{*t.ExitCode}
		}
	}
	return exitError{1}
}

func printLog(e api.LogEntry) error {
	w := os.Stdout
	if e.Stream == api.StreamStderr {
		w = os.Stderr
	}
	_, err := io.WriteString(w, e.Data)
	return err
}

func printJSON(v any) error {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func printJSONLine(v any) error { return json.NewEncoder(os.Stdout).Encode(v) }

func jobList(ctx context.Context, args []string) error {
	fs := newClientCmd("job list")
	limit := fs.Int("limit", 50, "most jobs to show, newest first (0: all; pages of GET /v1/jobs are followed)")
	asJSON := fs.Bool("json", false, "print JSON")
	c, _, err := fs.connect(args, -1, "")
	if err != nil {
		return err
	}
	jobs, err := c.Jobs(ctx, *limit)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(jobs)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tEXECUTOR\tTASKS\tCREATED BY\tCREATED")
	for _, j := range jobs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", j.ID, j.State, j.Executor, len(j.Tasks), j.CreatedBy, j.CreatedAt)
	}
	return tw.Flush()
}

func jobStatus(ctx context.Context, args []string) error {
	fs := newClientCmd("job status")
	asJSON := fs.Bool("json", false, "print JSON")
	c, pos, err := fs.connect(args, 1, "job id")
	if err != nil {
		return err
	}
	id := pos[0]
	job, err := c.Job(ctx, id)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(job)
	}
	printJob(os.Stdout, job)
	return nil
}

func printJob(w io.Writer, j api.Job) {
	fmt.Fprintf(w, "job %s  state=%s  executor=%s  created_by=%s  created=%s", j.ID, j.State, j.Executor, j.CreatedBy, j.CreatedAt)
	if j.Target != nil {
		fmt.Fprintf(w, "  target=%s:%s", j.Target.Kind, j.Target.ID)
	}
	if j.Capability != "" {
		fmt.Fprintf(w, "  capability=%s", j.Capability)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  TASK\tSTATE\tATTEMPT\tEXECUTED BY\tSUBMITTED BY\tEXIT\tDEVICES\tREASON")
	for _, t := range j.Tasks {
		exit := "-"
		if t.ExitCode != nil {
			exit = fmt.Sprint(*t.ExitCode)
		}
		devs := strings.Join(t.Devices, ",")
		if devs == "" && len(t.Attempts) > 0 {
			devs = strings.Join(t.Attempts[len(t.Attempts)-1].Devices, ",")
		}
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.State, t.Attempt, dash(t.ExecutedBy), dash(t.SubmittedBy), exit, dash(devs), t.Reason)
	}
	tw.Flush()
	for _, t := range j.Tasks {
		for _, a := range t.Attempts {
			fmt.Fprintf(w, "  attempt %d of %s: worker=%s state=%s assigned=%s ended=%s %s\n", a.Number, t.ID, a.WorkerID, a.State, a.AssignedAt, dash(a.EndedAt), a.Reason)
		}
	}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func jobLogs(ctx context.Context, args []string) error {
	fs := newClientCmd("job logs")
	follow := fs.Bool("follow", false, "keep streaming until the job ends")
	fs.BoolVar(follow, "f", false, "short for --follow")
	c, pos, err := fs.connect(args, 1, "job id")
	if err != nil {
		return err
	}
	id := pos[0]
	return c.Logs(ctx, id, *follow, printLog)
}

func jobCancel(ctx context.Context, args []string) error {
	fs := newClientCmd("job cancel")
	c, pos, err := fs.connect(args, 1, "job id")
	if err != nil {
		return err
	}
	id := pos[0]
	job, err := c.CancelJob(ctx, id)
	if err != nil {
		return err
	}
	fmt.Printf("job %s: cancel requested (state %s)\n", job.ID, job.State)
	return nil
}
