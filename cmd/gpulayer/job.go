package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

func jobCmd() *cobra.Command {
	return group("job", "submit and inspect jobs", "  gpulayer job submit --gpus 1 --wait -- nvidia-smi -L\n  gpulayer job list",
		jobSubmitCmd(), jobListCmd(), jobStatusCmd(), jobEventsCmd(), jobLogsCmd(), jobCancelCmd(), jobOutputsCmd(), jobExecCmd())
}

func jobSubmitCmd() *cobra.Command {
	var cf clientFlags
	var spec api.JobSpec
	var res resourceFlags
	var env, inputs []string
	var configJSON, target string
	var wait, asJSON bool
	var aff affinityFlags
	var flow flowFlags
	cmd := &cobra.Command{
		Use:   "submit [flags] [--] COMMAND [ARG...]",
		Short: "submit a job",
		Long: `submit sends a job to the coordinators and prints its id.

The words after the flags are the command each task runs (exec executor).
Flags are gpulayer's wherever they stand, so put the command after --
when it has flags of its own: "job submit --gpus 1 -- train --epochs 3".
Without --, a word that looks like a flag is taken as gpulayer's, and
refused if gpulayer has no such flag.

--env KEY=VALUE adds to that command's environment; the agent's own
variables (GPULAYER_*, CUDA_VISIBLE_DEVICES, NVIDIA_VISIBLE_DEVICES, HOME,
TMPDIR, USER, LOGNAME) cannot be set. With --config, put env in the
config instead.

--gpu-model, --gpu-memory and --compute-capability say which GPUs a task
may be given, so they go with --gpus. --gpu-memory is MiB as a plain
number, or a whole number with a binary unit: M or MiB, G or GiB, T or TiB
(80G is 81920 MiB); it is compared with the memory the worker reports.

--input FILE[:PATH] uploads FILE (unless the coordinators hold it
already) and has it staged at PATH in each task's directory (default: the
file's base name), verified against its digest before the task starts.
--output GLOB names files the task leaves in its directory (path.Match
globs; a directory takes the files under it); they are uploaded once it
ended: see job outputs.

With --wait, submit streams the job's logs and exits with its result: 0
when it succeeded, else the first failed task's exit code, else 1.`,
		Example: `  gpulayer job submit --gpus 1 --wait -- nvidia-smi -L
  gpulayer job submit --count 4 --name sweep -- python train.py --lr 0.1
  gpulayer job submit --executor echo --config '{"message":"hi"}' --json
  gpulayer job submit --count 8 --spread --prefer label:zone=a:80 --avoid group:flaky -- ./shard.sh
  gpulayer job submit --gpus 8 --gpu-model h100 --gpu-memory 80000 --exclusive -- ./train.sh
  gpulayer job submit --gang --count 4 --gpus 8 -- torchrun train.py
  gpulayer job submit --count 16 --max-per-worker 2 --compute-capability 8.0 --gpus 1 --env SEED=7 -- python eval.py
  gpulayer job submit --count 100 --parallelism 8 -- ./shard.sh
  gpulayer job submit --depends-on j1a2b3c4d --depends-on j5e6f7a8b:finished -- ./report.sh
  gpulayer job submit --input data.csv --input model.pt:ckpt/model.pt --output 'results/*' -- python eval.py`,
		RunE: func(cmd *cobra.Command, rest []string) error {
			if target != "" {
				ref, err := parseRef("--target", target)
				if err != nil {
					return usageError{err}
				}
				spec.Target = &api.Target{Kind: ref.Kind, ID: ref.ID}
			}
			resources, err := res.resources(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			spec.Resources = resources
			if spec.Gang && (spec.Count < 2 || spec.Count > api.MaxGangSize) {
				return usagef("--gang --count %d: a gang needs --count of 2 or more, at most %d", spec.Count, api.MaxGangSize)
			}
			if spec.MaxPerWorker < 0 {
				return usagef("--max-per-worker %d: give the most tasks of the job one worker may run at once, or 0 for no limit", spec.MaxPerWorker)
			}
			if err := flow.apply(&spec); err != nil { // jobflow.go
				return err
			}
			taskEnv, err := parseEnv(env, spec.Gang)
			if err != nil {
				return err
			}
			rules, err := aff.rules()
			if err != nil {
				return err
			}
			spec.Affinity = rules
			switch {
			case configJSON != "" && len(rest) > 0:
				return usagef("give either --config or a command after --, not both")
			case configJSON != "" && taskEnv != nil:
				return usagef("--env goes with a command after --; with --config, put the variables in the config's \"env\"")
			case configJSON != "":
				spec.Config = json.RawMessage(configJSON)
			case len(rest) > 0:
				b, _ := json.Marshal(api.ExecConfig{Command: rest[0], Args: rest[1:], Env: taskEnv})
				spec.Config = b
			default:
				return usagef("nothing to run: give a command after -- (or --config)")
			}
			refs, err := parseInputs(inputs)
			if err != nil {
				return err
			}
			for _, g := range spec.Outputs {
				if err := api.CheckOutputGlob(g); err != nil {
					return usagef("--output %q: %v", g, err)
				}
			}
			c, err := cf.client(cmd.Flags())
			if err != nil {
				return err
			}
			if spec.Inputs, err = uploadInputs(cmd.Context(), c, refs); err != nil {
				return err
			}
			return submit(cmd.Context(), c, spec, wait, asJSON)
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		var bad *pflag.InvalidValueError
		if errors.As(err, &bad) {
			return usageError{err} // a value of gpulayer's own flag that does not parse
		}
		return usagef("%w (a flag of the command to run? put the command after --: gpulayer job submit [flags] -- COMMAND [ARG...])", err)
	})
	fs := cmd.Flags()
	cf.register(fs)
	fs.BoolVar(&wait, "wait", false, "stream the logs and exit with the task's result")
	fs.BoolVar(&asJSON, "json", false, "print the job as JSON")
	fs.StringVar(&spec.Executor, "executor", "exec", "executor plugin")
	fs.StringVar(&spec.Name, "name", "", "job name")
	fs.IntVar(&res.gpus, "gpus", 0, "GPUs per task")
	fs.StringVar(&res.model, "gpu-model", "", "the task's GPUs must have this in their name, any case (h100 matches \"NVIDIA H100 80GB HBM3\"); with --gpus")
	fs.StringVar(&res.memory, "gpu-memory", "", "least memory of each of the task's GPUs: MiB (40960) or with a binary unit (80G, 40GiB, 24576MiB); with --gpus")
	fs.StringVar(&res.sharing, "gpu-sharing", "", "share one GPU with other tasks, taking --gpu-memory of it: enforced (only where the agent enforces the share, through MPS) or unenforced (the agent's watchdog alone stops a task over it); with --gpus 1")
	fs.StringVar(&res.migProfile, "mig-profile", "", "MIG devices of this profile instead of whole GPUs (1g.10gb, 3g.40gb); --gpus counts them")
	fs.StringVar(&res.taskMemory, "memory", "", "cap each task's memory (its cgroup on the agent): MiB (2048) or with a binary unit (4G, 512MiB); the agent's own --task-memory-mib holds if tighter")
	fs.Float64Var(&res.cpus, "cpus", 0, "cap each task's CPU time at this many CPUs, fractions allowed (0.5); the agent's own --task-cpus holds if tighter")
	fs.StringVar(&res.computeCapability, "compute-capability", "", "least CUDA compute capability of the task's GPUs, MAJOR.MINOR (8.0, 9.0); with --gpus")
	fs.IntVar(&spec.Count, "count", 1, "number of tasks")
	fs.IntVar(&spec.TimeoutSeconds, "timeout", 0, "task timeout in seconds (0: none)")
	fs.IntVar(&spec.MaxAttempts, "max-attempts", 0, "attempts per task (default 3)")
	fs.IntVar(&spec.LeaseSeconds, "lease", 0, "lease seconds (default 30)")
	fs.IntVar(&spec.Priority, "priority", 0, "priority (higher runs first)")
	fs.StringVar(&spec.IdempotencyKey, "idempotency-key", "", "submit at most once under this key")
	fs.StringVar(&configJSON, "config", "", "executor config as JSON (instead of a command after --); no variable sets it")
	_ = fs.SetAnnotation("config", noEnvAnnotation, []string{"GPULAYER_CONFIG is a config file's name"})
	fs.StringVar(&target, "target", "", "run only on worker:ID or on a member of group:ID")
	_ = cmd.RegisterFlagCompletionFunc("target", completion(connectFromFlags, listTargets))
	fs.StringVar(&spec.Capability, "capability", "", "capability a worker must offer to take the tasks")
	fs.StringArrayVar(&aff.prefer, "prefer", nil, "prefer (or, with a negative weight, shun) workers: worker:ID, group:ID or label:KEY[=VALUE], then :WEIGHT (-100..100, default 50); repeatable")
	fs.StringArrayVar(&aff.require, "require", nil, "run only on workers that match worker:ID, group:ID or label:KEY[=VALUE]; repeatable")
	fs.StringArrayVar(&aff.avoid, "avoid", nil, "never run on workers that match worker:ID, group:ID or label:KEY[=VALUE]; repeatable")
	fs.BoolVar(&spec.Spread, "spread", false, "spread the tasks over the workers that can take them")
	fs.BoolVar(&spec.Preflight, "preflight", false, "with --gang and --gpus: check each rank's GPUs before the gang meets; a GPU that fails is marked unhealthy and the gang placed again without using an attempt")
	fs.BoolVar(&spec.Gang, "gang", false, "run the --count tasks (2 or more) as a gang: placed together or not at all, met through rendezvous (MASTER_ADDR, RANK, WORLD_SIZE...), retried whole")
	fs.IntVar(&spec.MaxPerWorker, "max-per-worker", 0, "most of the job's tasks one worker runs at once (0: no limit)")
	flow.register(fs)
	fs.BoolVar(&spec.ExclusiveWorker, "exclusive", false, "run each task alone on its worker: no other task beside it, and it waits for a worker that runs nothing")
	fs.StringArrayVar(&inputs, "input", nil, "FILE[:PATH]: upload FILE and stage it at PATH in each task's directory (default its base name); repeatable")
	fs.StringArrayVar(&spec.Outputs, "output", nil, "GLOB of files (relative to the task's directory) uploaded when a task ends; repeatable")
	// Not GPULAYER_OUTPUT: that is -o's, the format of the read commands.
	readsEnv(fs, "output", "GPULAYER_OUTPUT_GLOB")
	fs.StringArrayVar(&env, "env", nil, "KEY=VALUE in the environment of the command after --; repeatable; no variable sets it")
	_ = fs.SetAnnotation("env", noEnvAnnotation, []string{"GPULAYER_ENV is too common a name to read as a task's variable"})
	return cmd
}

// submit sends spec and, with wait, follows the job to its end.
func submit(ctx context.Context, c *client.Client, spec api.JobSpec, wait, asJSON bool) error {
	job, err := c.SubmitJob(ctx, spec)
	if err != nil {
		return err
	}
	if !wait {
		if asJSON {
			return printJSON(job)
		}
		fmt.Fprintln(humanOut, job.ID)
		return nil
	}
	fmt.Fprintf(humanErr, "job %s submitted; streaming its logs\n", job.ID)
	wctx, stopWatch := context.WithCancel(ctx)
	go sayWhyItWaits(wctx, c, job.ID, humanErr)
	add, flush := waitPrinter(job)
	err = c.Logs(ctx, job.ID, true, add)
	stopWatch()
	if ferr := flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return err
	}
	job, err = c.Job(ctx, job.ID)
	if err != nil {
		return err
	}
	fmt.Fprintf(humanErr, "job %s %s\n", job.ID, job.State)
	printReasons(humanErr, job)
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
		fmt.Fprintf(w, "  task %s %s on attempt %d: %s\n", cell(t.ID), cell(t.State), t.Attempt, cell(t.Reason))
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

// printLog prints a task's output on the stream it came from, through
// o (sanitize.go: escaped to a terminal, exact otherwise).
func (o logOutput) printLog(e api.LogEntry) error {
	f := os.Stdout
	if e.Stream == api.StreamStderr {
		f = os.Stderr
	}
	return o.write(f, e.Data)
}

func jobListCmd() *cobra.Command {
	var limit int
	cmd := readCmd(&cobra.Command{
		Use:     "list [flags]",
		Short:   "list jobs, newest first",
		Example: "  gpulayer job list\n  gpulayer job list --limit 0 -o json\n  gpulayer job list -o wide --watch",
		Args:    noArgs,
	}, true, func(ctx context.Context, c *client.Client, _ []string) ([]api.Job, error) {
		return c.Jobs(ctx, limit)
	}, jobTable)
	cmd.Flags().IntVar(&limit, "limit", 50, "most jobs to show, newest first (0: all; pages of GET /v1/jobs are followed)")
	return cmd
}

func jobTable(w io.Writer, jobs []api.Job, wide bool) {
	if wide {
		row(w, "ID", "NAME", "STATE", "EXECUTOR", "TASKS", "PRIORITY", "TARGET", "CREATED BY", "CREATED", "UPDATED")
	} else {
		row(w, "ID", "STATE", "EXECUTOR", "TASKS", "CREATED BY", "CREATED")
	}
	for _, j := range jobs {
		if !wide {
			row(w, j.ID, j.State, j.Executor, fmt.Sprint(len(j.Tasks)), dash(j.CreatedBy), ago(j.CreatedAt))
			continue
		}
		target := "-"
		if j.Target != nil {
			target = j.Target.Kind + ":" + j.Target.ID
		}
		row(w, j.ID, dash(j.Name), j.State, j.Executor, fmt.Sprint(len(j.Tasks)), fmt.Sprint(j.Priority), target, dash(j.CreatedBy), dash(j.CreatedAt), ago(j.UpdatedAt))
	}
}

func jobStatusCmd() *cobra.Command {
	return readCmd(&cobra.Command{
		Use:     "status [flags] JOB",
		Short:   "show a job and its tasks",
		Example: "  gpulayer job status j0001\n  gpulayer job status j0001 -o json\n  gpulayer job status j0001 --watch",
		Args:    exactArgs(1, "job id"),
	}, true, func(ctx context.Context, c *client.Client, args []string) (jobView, error) {
		return fetchJobView(ctx, c, args[0])
	}, printJobView)
}

func printJob(w io.Writer, j api.Job, wide bool) {
	fmt.Fprintf(w, "job %s  state=%s  executor=%s  created_by=%s  created=%s", cell(j.ID), cell(j.State), cell(j.Executor), cell(j.CreatedBy), cell(j.CreatedAt))
	if j.Target != nil {
		fmt.Fprintf(w, "  target=%s:%s", cell(j.Target.Kind), cell(j.Target.ID))
	}
	if j.Capability != "" {
		fmt.Fprintf(w, "  capability=%s", cell(j.Capability))
	}
	if r := j.Resources; r != nil {
		fmt.Fprintf(w, "  gpus=%d", r.GPUs)
		if r.GPUModel != "" {
			fmt.Fprintf(w, "  gpu_model=%q", r.GPUModel)
		}
		if r.GPUMemoryMiB > 0 {
			fmt.Fprintf(w, "  gpu_memory=%dMiB", r.GPUMemoryMiB)
		}
		if r.ComputeCapability != "" {
			fmt.Fprintf(w, "  compute_capability=%s", cell(r.ComputeCapability))
		}
	}
	if j.MaxPerWorker > 0 {
		fmt.Fprintf(w, "  max_per_worker=%d", j.MaxPerWorker)
	}
	if j.ExclusiveWorker {
		fmt.Fprint(w, "  exclusive")
	}
	if j.Spread {
		fmt.Fprint(w, "  spread")
	}
	describeFlow(w, j)
	fmt.Fprintln(w)
	for _, line := range describeAffinity(j.Affinity) {
		fmt.Fprintf(w, "  affinity: %s\n", cell(line))
	}
	fmt.Fprintln(w, "  TASK\tSTATE\tATTEMPT\tEXECUTED BY\tSUBMITTED BY\tEXIT\tDEVICES\tREASON")
	for _, t := range j.Tasks {
		exit := "-"
		if t.ExitCode != nil {
			exit = fmt.Sprint(*t.ExitCode)
		}
		devs := strings.Join(t.Devices, ",")
		if devs == "" && len(t.Attempts) > 0 {
			devs = strings.Join(t.Attempts[len(t.Attempts)-1].Devices, ",")
		}
		reason := t.Reason
		if t.PendingReason != "" {
			reason = "waits: " + t.PendingReason
		}
		fmt.Fprintf(w, "  %s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", cell(t.ID), cell(t.State), t.Attempt, cell(dash(t.ExecutedBy)), cell(dash(t.SubmittedBy)), exit, cell(dash(devs)), cell(reason))
	}
	for _, t := range j.Tasks {
		for _, a := range t.Attempts {
			fmt.Fprintf(w, "  attempt %d of %s: worker=%s state=%s assigned=%s ended=%s %s\n", a.Number, cell(t.ID), cell(a.WorkerID), cell(a.State), cell(when(a.AssignedAt, wide)), cell(when(a.EndedAt, wide)), cell(a.Reason))
		}
	}
}

func jobLogsCmd() *cobra.Command {
	var o logsOptions
	cmd := clientLeaf(&cobra.Command{
		Use:   "logs [flags] JOB",
		Short: "print a job's output",
		Long: `logs prints a job's output, stdout to stdout and stderr to stderr, in whole
lines. When the job has more than one task (a gang's ranks) or a task ran
more than once, each line starts with its task's index and its attempt,
"[t1 a2] ", and a line marks where a task's next attempt begins;
--no-prefix prints the lines alone.`,
		Example: "  gpulayer job logs j0001\n  gpulayer job logs -f j0001\n  gpulayer job logs --task 3 --since 10m j0001\n  gpulayer job logs --tail 20 -f j0001",
		Args:    exactArgs(1, "job id"),
	}, nil, func(cmd *cobra.Command, c *client.Client, args []string, _ *outputFlags) error {
		return jobLogs(cmd.Context(), c, args[0], o)
	})
	fs := cmd.Flags()
	fs.BoolVarP(&o.follow, "follow", "f", false, "keep streaming until the job ends")
	fs.BoolVar(&o.out.raw, "raw", false, "print the output byte for byte even to a terminal (by default a terminal gets its control characters escaped, line ends and tabs kept; a file or a pipe always gets the bytes)")
	fs.StringVar(&o.task, "task", "", "only this task: its id or its index (a gang's rank)")
	fs.IntVar(&o.tail, "tail", -1, fmt.Sprintf("only the last N lines (0 … %d), then, with -f, what follows", maxTail))
	fs.StringVar(&o.since, "since", "", "only output written since: a duration before now (10m, 2h) or an RFC 3339 time")
	fs.BoolVar(&o.noPrefix, "no-prefix", false, "never put the task and attempt before a line, nor mark a new attempt")
	_ = cmd.RegisterFlagCompletionFunc("task", completion(connectFromFlags, listTasks))
	return cmd
}

func jobCancelCmd() *cobra.Command {
	return clientLeaf(&cobra.Command{
		Use:     "cancel [flags] JOB",
		Short:   "cancel a job",
		Example: "  gpulayer job cancel j0001",
		Args:    exactArgs(1, "job id"),
	}, nil, func(cmd *cobra.Command, c *client.Client, args []string, _ *outputFlags) error {
		job, err := c.CancelJob(cmd.Context(), args[0])
		if err != nil {
			return err
		}
		fmt.Fprintf(humanOut, "job %s: cancel requested (state %s)\n", job.ID, job.State)
		return nil
	})
}
