package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gpulayer/gpulayer/bench/rawraft"
)

// env is what every scenario shares: the binary to re-execute, a scratch
// directory, the report and the references measured so far.
type env struct {
	opts     options
	log      *slog.Logger
	exe      string
	root     string
	childLog *os.File
	report   *Report

	// References later scenarios compare against.
	r1 *rawraft.Result
	r2 *loadResult
}

func newEnv(opts options, log *slog.Logger) (*env, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("locating the benchmark binary: %w", err)
	}
	root, err := os.MkdirTemp("", "gpulayer-bench-")
	if err != nil {
		return nil, err
	}
	cl, err := os.OpenFile(filepath.Join(root, "children.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := "go run ./bench " + strings.Join(os.Args[1:], " ")
	return &env{
		opts: opts, log: log, exe: exe, root: root, childLog: cl,
		report: &Report{Command: strings.TrimSpace(cmd), Quick: opts.quick, Machine: machine()},
	}, nil
}

func (e *env) close() {
	e.childLog.Close()
	if !e.opts.keep {
		os.RemoveAll(e.root)
	} else {
		e.log.Info("kept data and child logs", "dir", e.root)
	}
}

// keepOnFailure keeps the child logs of a failed run for inspection.
func (e *env) keepOnFailure() {
	e.opts.keep = true
}

// dur picks the quick or the full duration.
func (e *env) dur(quick, full time.Duration) time.Duration {
	if e.opts.quick {
		return quick
	}
	return full
}

// num picks the quick or the full count.
func (e *env) num(quick, full int) int {
	if e.opts.quick {
		return quick
	}
	return full
}

func (e *env) want(s string) bool { return slices.Contains(e.opts.scenarios, s) }

// dir makes a fresh directory under the scratch root.
func (e *env) dir(name string) (string, error) {
	d := filepath.Join(e.root, name)
	return d, os.MkdirAll(d, 0o700)
}

// step runs one scenario, turning an error or panic into a functional
// failure so the others still run.
func (e *env) step(ctx context.Context, name string, fn func(context.Context) error) {
	if ctx.Err() != nil {
		return
	}
	e.log.Info("scenario", "name", name)
	t := time.Now()
	defer func() {
		if p := recover(); p != nil {
			e.report.fail("%s: panic: %v", name, p)
		}
		e.log.Info("scenario done", "name", name, "took", time.Since(t).Round(time.Millisecond))
	}()
	if err := fn(ctx); err != nil {
		e.log.Error("scenario failed", "name", name, "error", err)
		e.report.fail("%s: %v", name, err)
	}
}

// runAll runs the selected scenarios in an order that lets S1, S2, S4 and
// S3 share one cluster (S3 last on it: its 10,000 workers would otherwise
// linger in the lease timers).
func (e *env) runAll(ctx context.Context) {
	if e.want("r1") {
		e.step(ctx, "R1 raw raft", e.runR1)
	}
	if e.want("r2") {
		e.step(ctx, "R2 plain http", e.runR2)
	}
	if e.want("s1") || e.want("s2") || e.want("s3") || e.want("s4") {
		e.step(ctx, "cluster (tuned timeouts)", e.runOnTunedCluster)
	}
	if e.want("s4") && !e.opts.quick {
		// Quick mode runs S4 on the tuned cluster only: the variant
		// differs in two flags and would cost a tenth of the minute.
		e.step(ctx, "S4 failover (raft default timeouts)", e.runS4Defaults)
	}
	if e.want("s5") {
		e.step(ctx, "S5 plugin overhead", e.runS5)
	}
	if e.want("s6") || e.want("s7") {
		e.step(ctx, "S6 state size", e.runS6) // and S7, on S6's state
	}
	if e.want("s8") {
		e.step(ctx, "S8 output volume", e.runS8)
	}
	if e.want("s9") {
		e.step(ctx, "S9 memory per retained job", e.runS9)
	}
	if e.want("q1") {
		e.step(ctx, "Q1 placement at fleet scale", e.runQ1)
	}
	if e.want("e1") {
		e.step(ctx, "E1-E4 end to end on gpulayer dev", e.runE1)
	}
}

// runOnTunedCluster forms the three-coordinator cluster with the
// coordinator's own (LAN) Raft timeouts and runs S1, S2, S4 and S3 on it.
func (e *env) runOnTunedCluster(ctx context.Context) error {
	c, err := e.startCluster(ctx, "tuned", clusterOpts{})
	if err != nil {
		return err
	}
	defer c.stop()
	if e.want("s1") {
		e.step(ctx, "S1 task throughput", func(ctx context.Context) error { return e.runS1(ctx, c) })
	}
	if e.want("s2") {
		e.step(ctx, "S2 assignment latency", func(ctx context.Context) error { return e.runS2(ctx, c) })
	}
	if e.want("s4") {
		e.step(ctx, "S4 failover (tuned timeouts)", func(ctx context.Context) error { return e.runS4(ctx, c, "tuned") })
	}
	if e.want("s3") {
		e.step(ctx, "S3 heartbeat capacity", func(ctx context.Context) error { return e.runS3(ctx, c) })
	}
	return nil
}
