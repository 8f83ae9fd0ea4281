package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/gpulayer/gpulayer/agent/pluginhost"
	"github.com/gpulayer/gpulayer/bench/stats"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/executor"
)

// runS5 runs `true` as a task through the built-in exec executor in its
// plugin process (this binary re-executed, as the agent re-executes
// gpulayer; the process is reused across tasks, as pluginhost does), the
// way agent/runner drives it, and the same command by a plain fork/exec,
// interleaved.
func (e *env) runS5(ctx context.Context) error {
	dir, err := e.dir("s5")
	if err != nil {
		return err
	}
	h, err := pluginhost.New(pluginhost.Config{
		Logger:  slog.New(slog.DiscardHandler),
		SelfExe: e.exe, SelfArgs: func(name string) []string { return []string{"__plugin", name} },
	})
	if err != nil {
		return err
	}
	defer h.Close()
	t := time.Now()
	if _, err := h.Get(ctx, "exec"); err != nil {
		return err
	}
	cold := time.Since(t)
	cfg, _ := json.Marshal(api.ExecConfig{Command: "true"})
	env := map[string]string{"CUDA_VISIBLE_DEVICES": "", "NVIDIA_VISIBLE_DEVICES": "", "GPULAYER_TASK_ID": "s5"}

	var viaPlugin, plain, diff stats.Recorder
	n := e.num(30, 300)
	for i := range n + 3 { // three warm-ups
		wd := filepath.Join(dir, fmt.Sprint(i))
		if err := os.MkdirAll(wd, 0o700); err != nil {
			return err
		}
		t0 := time.Now()
		if err := pluginTask(ctx, h, executor.Task{ID: fmt.Sprintf("s5-%d", i), TaskID: "s5", JobID: "s5", Config: cfg, Env: env, WorkDir: wd}); err != nil {
			return err
		}
		d1 := time.Since(t0)
		t1 := time.Now()
		cmd := exec.CommandContext(ctx, "true")
		cmd.Dir = wd
		cmd.Env = os.Environ()
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("fork/exec true: %w", err)
		}
		d2 := time.Since(t1)
		if i >= 3 {
			viaPlugin.Add(d1)
			plain.Add(d2)
			diff.Add(d1 - d2)
		}
	}
	p, f, d := viaPlugin.Summary(), plain.Summary(), diff.Summary()
	over50, over99 := d.P50MS, d.P99MS // of the paired differences
	e.report.detail("s5", map[string]any{"plugin": p, "fork_exec": f, "cold_start_ms": float64(cold.Microseconds()) / 1000, "overhead_p50_ms": over50, "overhead_p99_ms": over99})
	e.report.add(Row{
		Scenario: "S5", Metric: fmt.Sprintf("per-task overhead of the exec plugin (process reused), `true` ×%d", n),
		Value:     fmt.Sprintf("p50 %.2f ms, p99 %.2f ms", over50, over99),
		Reference: fmt.Sprintf("plugin task p50 %.2f / p99 %.2f ms; fork/exec p50 %.2f / p99 %.2f ms", p.P50MS, p.P99MS, f.P50MS, f.P99MS),
		Target:    "p50 ≤ 50 ms", Met: met(p.P50MS <= 50),
	})
	e.report.add(Row{Scenario: "S5", Metric: "plugin cold start (launch + handshake, once per agent)", Value: fmt.Sprintf("%.0f ms", float64(cold.Microseconds())/1000)})
	return nil
}

// pluginTask carries one task through the executor as agent/runner does:
// Get (which pings the plugin), Start, Logs and Wait side by side.
func pluginTask(ctx context.Context, h *pluginhost.Host, task executor.Task) error {
	ex, err := h.Get(ctx, "exec")
	if err != nil {
		return err
	}
	if err := ex.Start(ctx, task); err != nil {
		return err
	}
	logs := make(chan error, 1)
	go func() { logs <- ex.Logs(ctx, task.ID, func(executor.LogChunk) error { return nil }) }()
	res, err := ex.Wait(ctx, task.ID)
	if err != nil {
		return err
	}
	if err := <-logs; err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("plugin task exited %d: %s", res.ExitCode, res.Reason)
	}
	return nil
}
