package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpulayer/gpulayer/agent/pluginhost"
	"github.com/gpulayer/gpulayer/bench/proc"
	"github.com/gpulayer/gpulayer/bench/stats"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// E1-E4 measure GpuLayer end to end as a user meets it: `gpulayer dev`
// (a coordinator and an agent in one process, the real binary), jobs
// submitted and read through the HTTP API.
//
//   - E1: n one-task `/bin/true` jobs through the built-in exec executor
//     from 16 concurrent submitters; jobs/s from the first submit until
//     every job reads terminal.
//   - E2: one job at a time, submit → terminal visible through the API
//     (the log stream ends, the job reads terminal); p50.
//   - E3: the dev process's resident memory after E1 and E2.
//   - E4: E1 with a no-op executor (examples/plugins/echo), through the
//     one agent.
//
// The reference, measured in the same run, is the same number of
// `/bin/true` fork/execs from 16 goroutines: what running the commands
// costs with no scheduler at all.

// devProcess is a running `gpulayer dev`.
type devProcess struct {
	child  *proc.Child
	client *client.Client
}

// buildTools builds the gpulayer binary and the echo plugin into dir;
// with prof, the binary carries the benchpprof tag's profile controls.
func buildTools(ctx context.Context, dir string, prof bool) (gpulayer, pluginDir string, err error) {
	gpulayer = filepath.Join(dir, "gpulayer")
	pluginDir = filepath.Join(dir, "plugins")
	if err := os.MkdirAll(pluginDir, 0o755); err != nil {
		return "", "", err
	}
	for out, pkg := range map[string]string{
		gpulayer: "github.com/gpulayer/gpulayer/cmd/gpulayer",
		filepath.Join(pluginDir, pluginhost.BinaryPrefix+"echo"): "github.com/gpulayer/gpulayer/examples/plugins/echo",
	} {
		args := []string{"build", "-o", out}
		if prof && out == gpulayer {
			args = append(args, "-tags", "benchpprof")
		}
		if b, err := exec.CommandContext(ctx, "go", append(args, pkg)...).CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
		}
	}
	return gpulayer, pluginDir, nil
}

// startDev runs `gpulayer dev` with no GPUs and waits until it has
// written its address and token; prof, when set, is where its profile
// controls listen.
func (e *env) startDev(ctx context.Context, dir, gpulayer, pluginDir string, prof *devProfiler) (*devProcess, error) {
	envFile := filepath.Join(dir, "env")
	var childEnv []string
	if prof != nil {
		childEnv = []string{devPprofEnv + "=" + prof.addr}
	}
	ch, err := proc.Start(context.WithoutCancel(ctx), proc.Spec{
		Name: "dev", Exe: gpulayer, Stderr: e.childLog, Env: childEnv,
		Args: []string{"dev", "--http-addr", "127.0.0.1:0", "--env-file", envFile, "--fake-gpus", "none", "--plugin-dir", pluginDir, "--log-level", "warn"},
	})
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if b, err := os.ReadFile(envFile); err == nil && bytes.Count(b, []byte("\n")) == 2 {
			vars := map[string]string{}
			for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				k, v, _ := strings.Cut(line, "=")
				vars[k] = v
			}
			c, err := client.New(client.Config{Addrs: []string{vars["GPULAYER_ADDR"]}, Token: vars["GPULAYER_TOKEN"]})
			if err != nil {
				ch.Stop(5 * time.Second)
				return nil, err
			}
			return &devProcess{child: ch, client: c}, nil
		}
		select {
		case <-ch.Done():
			return nil, fmt.Errorf("gpulayer dev exited: %v", ch.Err())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			ch.Stop(5 * time.Second)
			return nil, errors.New("gpulayer dev not ready after 60 s")
		}
	}
}

// runE1 runs E1, E2, E3 and E4 on one `gpulayer dev`.
func (e *env) runE1(ctx context.Context) error {
	dir, err := e.dir("e1")
	if err != nil {
		return err
	}
	gpulayer, pluginDir, err := buildTools(ctx, dir, e.opts.devProf)
	if err != nil {
		return err
	}
	var prof *devProfiler
	if e.opts.devProf {
		if prof, err = newDevProfiler(); err != nil {
			return err
		}
	}
	dev, err := e.startDev(ctx, dir, gpulayer, pluginDir, prof)
	if err != nil {
		return err
	}
	defer dev.child.Stop(10 * time.Second)
	c := dev.client
	// Wait for the agent: one job through end to end.
	if _, err := runOne(ctx, c, trueSpec()); err != nil {
		return fmt.Errorf("first job: %w", err)
	}

	n := e.num(60, 500)
	ref, err := forkExecRate(ctx, n, 16)
	if err != nil {
		return err
	}
	cpu0, _ := dev.child.CPU()
	var rate float64
	err = e.around(ctx, prof, "e1", func() (err error) {
		rate, err = burst(ctx, c, n, 16, trueSpec())
		return err
	})
	if err != nil {
		return fmt.Errorf("E1: %w", err)
	}
	cpu1, _ := dev.child.CPU()
	e.report.add(Row{
		Scenario: "E1", Metric: fmt.Sprintf("%d one-task `/bin/true` jobs, 16 submitters, `gpulayer dev` (exec executor)", n),
		Value:     fmt.Sprintf("%.0f jobs/s until all read terminal; dev process CPU %.2f ms a job", rate, perJob(cpu1-cpu0, n)),
		Reference: fmt.Sprintf("fork/exec of `/bin/true` ×%d from 16 goroutines: %.0f/s (ratio %.3f)", n, ref, rate/ref),
	})

	var lat stats.Recorder
	m := e.num(10, 50)
	for range m {
		d, err := runOne(ctx, c, trueSpec())
		if err != nil {
			return fmt.Errorf("E2: %w", err)
		}
		lat.Add(d)
	}
	one := lat.Summary()
	e.report.add(Row{
		Scenario: "E2", Metric: fmt.Sprintf("one job at a time, submit → terminal visible through the API, ×%d", m),
		Value: fmt.Sprintf("p50 %.1f ms, p99 %.1f ms", one.P50MS, one.P99MS),
	})
	rss, hwm, err := dev.child.Memory()
	if err != nil {
		return err
	}
	e.report.add(Row{
		Scenario: "E3", Metric: "resident memory of `gpulayer dev` after E1 and E2",
		Value: fmt.Sprintf("%.0f MB (peak %.0f MB)", float64(rss)/1e6, float64(hwm)/1e6),
	})

	echo, _ := json.Marshal(map[string]any{"message": "ok"})
	cpu2, _ := dev.child.CPU()
	var rate4 float64
	err = e.around(ctx, prof, "e4", func() (err error) {
		rate4, err = burst(ctx, c, n, 16, api.JobSpec{Executor: "echo", Config: echo})
		return err
	})
	if err != nil {
		return fmt.Errorf("E4: %w", err)
	}
	cpu3, _ := dev.child.CPU()
	e.report.add(Row{
		Scenario: "E4", Metric: fmt.Sprintf("E1 with a no-op executor plugin (echo), one agent, ×%d", n),
		Value:  fmt.Sprintf("%.0f jobs/s; dev process CPU %.2f ms a job", rate4, perJob(cpu3-cpu2, n)),
		Target: "≥ 1000 jobs/s", Met: met(rate4 >= 1000),
	})
	e.report.detail("e1", map[string]any{"jobs": n, "e1_jobs_per_s": rate, "fork_exec_per_s": ref, "e2": one, "e3_rss_bytes": rss, "e3_hwm_bytes": hwm, "e4_jobs_per_s": rate4})
	return nil
}

func trueSpec() api.JobSpec {
	cfg, _ := json.Marshal(api.ExecConfig{Command: "/bin/true"})
	return api.JobSpec{Executor: "exec", Config: cfg}
}

// runOne submits spec and returns how long until the job reads
// terminal: its log stream ends when the job does.
func runOne(ctx context.Context, c *client.Client, spec api.JobSpec) (time.Duration, error) {
	t := time.Now()
	job, err := c.SubmitJob(ctx, spec)
	if err != nil {
		return 0, err
	}
	if err := waitSucceeded(ctx, c, job.ID); err != nil {
		return 0, err
	}
	return time.Since(t), nil
}

// burst submits n jobs of spec from the given number of submitters and
// returns jobs/s from the first submit until every one reads terminal,
// checking that all succeeded. Each submitter then waits for its own
// jobs in turn, through the job's log stream (which ends when the job
// does) and one read: two requests a job, so that watching costs the
// coordinator little beside the work watched.
func burst(ctx context.Context, c *client.Client, n, submitters int, spec api.JobSpec) (float64, error) {
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, submitters)
	for range submitters {
		wg.Go(func() {
			var mine []string
			for next.Add(1) <= int64(n) {
				job, err := c.SubmitJob(ctx, spec)
				if err != nil {
					errs <- err
					return
				}
				mine = append(mine, job.ID)
			}
			for _, id := range mine {
				if err := waitSucceeded(ctx, c, id); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	select {
	case err := <-errs:
		return 0, err
	default:
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// waitSucceeded waits for job id to end and checks that it succeeded.
func waitSucceeded(ctx context.Context, c *client.Client, id string) error {
	if err := c.Logs(ctx, id, true, func(api.LogEntry) error { return nil }); err != nil {
		return err
	}
	job, err := c.Job(ctx, id)
	if err != nil {
		return err
	}
	if job.State != api.TaskSucceeded {
		return fmt.Errorf("job %s %s", job.ID, job.State)
	}
	return nil
}

// forkExecRate is the reference: n fork/execs of /bin/true from the given
// number of goroutines, per second.
func forkExecRate(ctx context.Context, n, workers int) (float64, error) {
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Int64
	for range workers {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				if err := exec.CommandContext(ctx, "/bin/true").Run(); err != nil {
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if failed.Load() > 0 {
		return 0, fmt.Errorf("%d fork/execs of /bin/true failed", failed.Load())
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// perJob is CPU time per job, in milliseconds.
func perJob(cpu time.Duration, n int) float64 {
	return float64(cpu.Microseconds()) / 1000 / float64(n)
}
