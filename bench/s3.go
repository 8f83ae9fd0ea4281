package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/gpulayer/gpulayer/bench/proc"
)

// S3 load shape: ten thousand workers heartbeating every two seconds,
// carried over a pool of keep-alive connections (a fleet's agents each
// hold one; the pool bounds the benchmark's own cost). Quick mode offers
// the same 5,000/s from 500 workers every 100 ms, because registering ten
// thousand takes longer than the whole quick run may.
const s3Pool = 512

func (e *env) s3Shape() (workers int, interval time.Duration) {
	if e.opts.quick {
		return 500, 100 * time.Millisecond
	}
	return 10000, 2 * time.Second
}

// authFuncs name the code that authenticates and authorises a request.
var authFuncs = []string{"httpapi.(*Server).authenticate", "httpapi.authorize", "auth.Authenticator.Authenticate", "auth.Authorize"}

func sharedHTTPClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = s3Pool * 2
	tr.MaxIdleConnsPerHost = s3Pool * 2
	return &http.Client{Transport: tr}
}

// runS3 offers 5,000 heartbeats/s from 10,000 registered workers to the
// leader and measures what it sustains, its latency and CPU; and, at the
// same rate, two references without authentication: the coordinator's
// public health route, and R2's bare handler decoding the same body.
func (e *env) runS3(ctx context.Context, c *cluster) error {
	leader, err := c.awaitLeader(ctx, "", 10*time.Second)
	if err != nil {
		return err
	}
	urls := c.urls(leader)
	hc := sharedHTTPClient()
	nWorkers, interval := e.s3Shape()
	t0 := time.Now()
	workers, err := registerAgents(ctx, urls, c.joinToken, "s3-", nWorkers, []string{"exec"}, hc, 64, nil)
	if err != nil {
		return err
	}
	regRate := float64(nWorkers) / time.Since(t0).Seconds()
	rate := float64(nWorkers) / interval.Seconds()
	warm := e.dur(500*time.Millisecond, 2*time.Second)
	ref := e.dur(time.Second, 5*time.Second)
	sender, err := newHBSender(hc, workers)
	if err != nil {
		return err
	}
	self0, _ := proc.CPUOf(os.Getpid())

	// No-auth reference 1: the public health route of the same leader.
	var healthCPU time.Duration
	health := paced(ctx, rate, s3Pool, warm, func() {
		healthCPU = cpuDuring(leader.proc(), func() { <-time.After(ref) })
	}, func(ctx context.Context, k int) error { return sender.health(ctx, leader.url) })

	// No-auth reference 2: R2's bare handler, same body, same sender.
	plain, err := e.startPlainHTTP(ctx)
	if err != nil {
		return err
	}
	var bareCPU time.Duration
	bareRes := paced(ctx, rate, s3Pool, warm, func() {
		bareCPU = cpuDuring(plain.child, func() { <-time.After(ref) })
	}, func(ctx context.Context, k int) error { return sender.heartbeat(ctx, plain.url, k) })
	plain.child.Stop(5 * time.Second)

	// The measurement: authenticated heartbeats, profiled.
	secs := int(e.dur(2*time.Second, 15*time.Second) / time.Second)
	var hbCPU time.Duration
	var prof profileSummary
	var auth, handler float64
	var perr error
	hb := paced(ctx, rate, s3Pool, warm, func() {
		hbCPU = cpuDuring(leader.proc(), func() {
			p, sum, err := e.profile(ctx, leader, secs, "s3-leader")
			prof, perr = sum, err
			if err == nil {
				auth = p.Share(authFuncs...)
				handler = p.Share("httpapi.(*Server).serve")
				prof.Shares = map[string]float64{"authenticate+authorize": auth, "httpapi serve (all request handling)": handler, "heartbeat handler": p.Share("httpapi.(*Server).heartbeat")}
			}
		})
	}, func(ctx context.Context, k int) error { return sender.heartbeat(ctx, leader.url, k) })
	self1, _ := proc.CPUOf(os.Getpid())
	if now, err := c.awaitLeader(ctx, "", 10*time.Second); err != nil || now != leader {
		e.warnLeaderMoved("S3", leader)
	}
	if perr != nil {
		e.log.Warn("S3 profile", "error", perr)
	} else {
		e.report.detail("profile_s3_leader", prof)
	}

	hbPer, healthPer, barePer := cpuPerReq(hbCPU, hb), cpuPerReq(healthCPU, health), cpuPerReq(bareCPU, bareRes)
	e.report.detail("s3", map[string]any{
		"workers": nWorkers, "interval_s": interval.Seconds(), "pool": s3Pool, "bench_process_cpu_s": (self1 - self0).Seconds(), "registrations_per_sec": regRate,
		"heartbeat": hb, "heartbeat_cpu_us_per_req": hbPer, "leader_cpu_pct": pctOf(hbCPU, hb.Window),
		"health_no_auth": health, "health_cpu_us_per_req": healthPer,
		"bare_no_auth": bareRes, "bare_cpu_us_per_req": barePer,
		"auth_share_of_leader_cpu_pct": auth, "request_handling_share_pct": handler,
	})
	e.report.add(Row{
		Scenario: "S3", Metric: fmt.Sprintf("heartbeats sustained, %d workers every %v → leader (authenticated)", nWorkers, interval),
		Value:  fmt.Sprintf("%.0f/s of %.0f/s offered (%d errors%s)", hb.Rate, hb.Offered, hb.Latency.Errors, errNote(hb.LastError)),
		Target: "5,000/s", Met: met(hb.Rate >= 4950 && hb.Latency.Errors == 0),
	})
	e.report.add(Row{
		Scenario: "S3", Metric: "heartbeat latency p50 / p99 (from when due)",
		Value:     fmt.Sprintf("%.2f / %.2f ms", hb.Latency.P50MS, hb.Latency.P99MS),
		Reference: fmt.Sprintf("health (no auth) %.2f / %.2f ms; bare handler %.2f / %.2f ms", health.Latency.P50MS, health.Latency.P99MS, bareRes.Latency.P50MS, bareRes.Latency.P99MS),
		Target:    "p99 ≤ 50 ms", Met: met(hb.Latency.P99MS <= 50),
	})
	e.report.add(Row{
		Scenario: "S3", Metric: "leader CPU during heartbeats",
		Value:     fmt.Sprintf("%.0f%% of one core, %.0f µs/heartbeat", pctOf(hbCPU, hb.Window), hbPer),
		Reference: fmt.Sprintf("health (no auth) %.0f µs/req = %.2fx; bare handler %.0f µs/req = %.2fx", healthPer, hbPer/max(healthPer, 1), barePer, hbPer/max(barePer, 1)),
	})
	authRow := Row{Scenario: "S3", Metric: "authentication cost (pprof: authenticate+authorize share of leader CPU)", Target: "≤ 5%"}
	if perr == nil {
		authRow.Value = fmt.Sprintf("%.1f%% of leader CPU (%.1f%% of request handling)", auth, 100*auth/max(handler, 0.01))
		authRow.Reference = fmt.Sprintf("without it ≈ %.0f µs/heartbeat", hbPer*(1-auth/100))
		authRow.Met = met(auth <= 5)
	} else {
		authRow.Value = "profile failed: " + perr.Error()
	}
	e.report.add(authRow)
	e.report.add(Row{Scenario: "S3", Metric: "worker registrations (setup, 64 concurrent)", Value: fmt.Sprintf("%.0f/s", regRate)})
	return nil
}

// errNote renders a load generator's last error for the table.
func errNote(s string) string {
	if s == "" {
		return ""
	}
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return "; last: " + s
}

func pctOf(cpu, window time.Duration) float64 {
	if window == 0 {
		return 0
	}
	return cpu.Seconds() / window.Seconds() * 100
}
