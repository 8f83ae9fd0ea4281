package main

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/gpulayer/gpulayer/sdk/client"
)

// s7Figures is what S7 measured: submits offered at a steady rate, first
// with no snapshot running, then while snapshots are taken back to back.
type s7Figures struct {
	Tasks, Workers int
	Rate           float64
	Quiet, During  loadResult
	Snapshots      int
	SnapshotS      float64 // mean time of one snapshot save
	Ratio          float64 // p99 during / p99 quiet
}

// runS7 runs on S6's coordinator once it holds S6's state: submit latency
// (open loop, from when each submit was due) without a snapshot, then
// while GET /v1/operator/snapshot streams the whole state again and again.
// A snapshot that stalls writes shows as a p99 many times the quiet one.
func (e *env) runS7(ctx context.Context, c *cluster, n *coordProc, f6 s6Figures) error {
	sub, err := client.New(client.Config{Addrs: []string{n.url}, Token: c.adminToken, MaxRetryWait: 10 * time.Second})
	if err != nil {
		return err
	}
	f := s7Figures{Tasks: f6.Tasks, Workers: f6.Workers, Rate: 100}
	window := time.Duration(e.num(1, 4)) * time.Second
	var k atomic.Int64
	submit := func(ctx context.Context, _ int) error {
		_, err := sub.SubmitJob(ctx, execSpec(fmt.Sprintf("s7-%d", k.Add(1)), 0))
		return err
	}
	f.Quiet = paced(ctx, f.Rate, 16, 300*time.Millisecond, func() { <-time.After(window) }, submit)
	var took time.Duration
	f.During = paced(ctx, f.Rate, 16, 300*time.Millisecond, func() {
		end := time.Now().Add(window)
		for f.Snapshots == 0 || time.Now().Before(end) {
			t := time.Now()
			if _, err := sub.SaveSnapshot(ctx, io.Discard); err != nil {
				e.log.Error("S7 snapshot save failed", "error", err)
				return
			}
			took += time.Since(t)
			f.Snapshots++
		}
	}, submit)
	if f.Snapshots > 0 {
		f.SnapshotS = took.Seconds() / float64(f.Snapshots)
	}
	if f.Quiet.Latency.P99MS > 0 {
		f.Ratio = f.During.Latency.P99MS / f.Quiet.Latency.P99MS
	}
	e.report.detail("s7", f)
	e.report.add(Row{
		Scenario: "S7", Metric: fmt.Sprintf("submit p99 while snapshots are taken (%d finished tasks, %d workers; %.0f submits/s offered)", f.Tasks, f.Workers, f.Rate),
		Value: fmt.Sprintf("p99 %.1f ms (p50 %.1f; %d errors) during %d snapshots of %.2f s each = %.1f× quiet",
			f.During.Latency.P99MS, f.During.Latency.P50MS, f.During.Latency.Errors, f.Snapshots, f.SnapshotS, f.Ratio),
		Reference: fmt.Sprintf("no snapshot: p99 %.1f ms (p50 %.1f)", f.Quiet.Latency.P99MS, f.Quiet.Latency.P50MS),
		Target:    "≤ 2×", Met: e.judged(f.Ratio <= 2),
	})
	return nil
}
