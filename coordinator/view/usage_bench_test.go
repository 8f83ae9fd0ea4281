package view_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/bench/stategen"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/coordinator/view"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// usageBenchAttemptsEnv sets how many finished, metered attempts the
// usage benchmark's state holds (default 1,000,000).
const usageBenchAttemptsEnv = "GPULAYER_USAGE_BENCH_ATTEMPTS"

var (
	usageOnce  sync.Once
	usageStore *state.Store
	usageErr   error
	usageFrom  time.Time
	usageSpan  time.Duration
)

// usageState is a busy cluster's month: one-GPU attempts, each of 90
// seconds, starting 2.5 s apart (1,000,000 of them span 29 days), by 8
// teams and 40 users, on 1,000 workers of 8 H100s.
func usageState(b *testing.B) *state.Store {
	b.Helper()
	usageOnce.Do(func() {
		n := 1_000_000
		if v := os.Getenv(usageBenchAttemptsEnv); v != "" {
			if n, usageErr = strconv.Atoi(v); usageErr != nil {
				return
			}
		}
		teams, users := make([]string, 8), make([]string, 40)
		for i := range teams {
			teams[i] = fmt.Sprintf("team-%d", i)
		}
		for i := range users {
			users[i] = fmt.Sprintf("user-%02d", i)
		}
		cfg, _ := json.Marshal(api.ExecConfig{Command: "true"})
		start := time.Now()
		usageStore, usageErr = stategen.Build(stategen.Options{
			NodeID: "c1", NodeURL: "http://127.0.0.1:1", Workers: 1000, Tasks: n, Metered: true,
			Spacing: 2500 * time.Millisecond, RunFor: 90 * time.Second, Teams: teams, Users: users,
			Spec: command.JobSpec{Name: "bench", Executor: "exec", Config: cfg, Count: 1, IdempotencyKey: "usage", Resources: &command.Resources{GPUs: 1}},
			Devices: func(id string) []command.Device {
				out := make([]command.Device, 8)
				for i := range out {
					out[i] = command.Device{Index: i, UUID: fmt.Sprintf("GPU-%s-%d", id, i), Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559, Healthy: true}
				}
				return out
			},
		})
		usageFrom = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		usageSpan = time.Duration(n)*2500*time.Millisecond + time.Hour
		b.Logf("built %d finished attempts in %s", n, time.Since(start).Round(time.Second))
	})
	if usageErr != nil {
		b.Fatal(usageErr)
	}
	return usageStore
}

// BenchmarkUsageQuery times GET /v1/usage's work on the state, without
// HTTP: reading the roll-up rows of the whole range and grouping them
// (by team, by user), the same for a range that cuts buckets at both
// ends (by_team_cut), and, grouped by job, walking every retained job's
// attempts. Run: go test -run XXX -bench UsageQuery -benchtime 5x
// ./coordinator/view/ (GPULAYER_USAGE_BENCH_ATTEMPTS=N for another
// size; docs/performance.md has the figures).
func BenchmarkUsageQuery(b *testing.B) {
	s := usageState(b)
	from, to := usageFrom, usageFrom.Add(usageSpan)
	all := func(string) bool { return true }
	for _, groupBy := range []string{api.UsageByTeam, api.UsageByUser} {
		b.Run("by_"+groupBy, func(b *testing.B) {
			var rows int
			for b.Loop() {
				rows = len(view.UsageRows(s.UsageRows(from, to), groupBy, all))
			}
			b.ReportMetric(float64(len(s.UsageRows(from, to))), "table_rows")
			b.ReportMetric(float64(rows), "answer_rows")
		})
	}
	// A range whose ends cut hour buckets (a client's "since I started,
	// until now"): the cut parts are counted from the retained attempts,
	// a walk of every retained job.
	b.Run("by_team_cut", func(b *testing.B) {
		cutFrom, cutTo := from.Add(30*time.Minute), to.Add(-90*time.Minute)
		var rows int
		for b.Loop() {
			rows = len(view.UsageRows(s.UsageRows(cutFrom, cutTo), api.UsageByTeam, all))
		}
		b.ReportMetric(float64(rows), "answer_rows")
	})
	b.Run("by_job", func(b *testing.B) {
		var rows int
		for b.Loop() {
			rows = len(view.JobUsageRows(s.JobsUsage("", from, to)))
		}
		b.ReportMetric(float64(rows), "answer_rows")
	})
	b.Run("by_job_one_team", func(b *testing.B) {
		var rows int
		for b.Loop() {
			rows = len(view.JobUsageRows(s.JobsUsage("team-3", from, to)))
		}
		b.ReportMetric(float64(rows), "answer_rows")
	})
}
