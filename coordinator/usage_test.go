package coordinator_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/internal/clock"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// GPU time through a real coordinator: a two-GPU task of team vision
// runs ten minutes by the coordinator's clock; GET /v1/usage answers
// 1,200 GPU-seconds to vision's token and to an admin, grouped by team,
// GPU model, user or job, and nothing to another team's token; the
// Prometheus counter says the same; bad queries are 400.
func TestUsageOverHTTP(t *testing.T) {
	start := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	clk := clock.NewFake(start)
	h := coordinatortest.Start(t, coordinatortest.Options{Tweak: func(c *coordinator.Config) { c.Clock = clk }})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	if _, err := admin.CreateTeam(ctx, api.CreateTeamRequest{Name: "vision"}); err != nil {
		t.Fatal(err)
	}
	aliceTok := mintTeamClient(t, h, "alice", "vision", "submit")
	alice, bob := h.Client(t, aliceTok), h.Client(t, mintTeamClient(t, h, "bob", api.DefaultTeam, "read"))
	reg, err := h.Client(t, h.JoinToken).Register(ctx, api.RegisterRequest{WorkerID: "gpu-1", Capabilities: []string{"*"}, Executors: []string{"exec"},
		Devices: []api.Device{
			{Index: 0, UUID: "GPU-0", Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559, Healthy: true, Health: api.HealthHealthy},
			{Index: 1, UUID: "GPU-1", Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559, Healthy: true, Health: api.HealthHealthy},
		}})
	if err != nil {
		t.Fatal(err)
	}
	job, err := alice.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`), Resources: &api.Resources{GPUs: 2}})
	if err != nil {
		t.Fatal(err)
	}
	worker := h.Client(t, reg.WorkerToken)
	acq, err := worker.Acquire(ctx, api.AcquireRequest{})
	if err != nil || acq.Task == nil {
		t.Fatalf("acquire: %+v %v", acq, err)
	}
	if err := worker.Start(ctx, acq.Task.ID, acq.Task.AttemptID); err != nil {
		t.Fatal(err)
	}
	clk.Advance(10 * time.Minute)
	if _, err := worker.Finish(ctx, acq.Task.ID, api.FinishRequest{AttemptID: acq.Task.AttemptID}); err != nil {
		t.Fatal(err)
	}
	q := client.UsageQuery{From: start.Add(-time.Hour), To: start.Add(time.Hour)}
	for _, c := range []struct {
		who     string
		c       *client.Client
		groupBy string
		want    api.UsageRow
	}{
		{"alice", alice, api.UsageByTeam, api.UsageRow{Team: "vision", GPUSeconds: 1200, Tasks: 1}},
		{"admin", admin, api.UsageByGPUModel, api.UsageRow{Team: "vision", GPUModel: "NVIDIA H100 80GB HBM3", GPUSeconds: 1200, Tasks: 1}},
		{"admin", admin, api.UsageByUser, api.UsageRow{Team: "vision", User: "alice", GPUSeconds: 1200, Tasks: 1}},
		{"alice", alice, api.UsageByJob, api.UsageRow{Team: "vision", User: "alice", JobID: job.ID, GPUSeconds: 1200, Tasks: 1}},
	} {
		q.GroupBy = c.groupBy
		u, err := c.c.Usage(ctx, q)
		if err != nil || len(u.Rows) != 1 || u.Rows[0] != c.want || u.GroupBy != c.groupBy {
			t.Errorf("%s by %s: %+v %v, want the row %+v", c.who, c.groupBy, u, err, c.want)
		}
	}
	for _, groupBy := range []string{api.UsageByTeam, api.UsageByJob} {
		q.GroupBy = groupBy
		if u, err := bob.Usage(ctx, q); err != nil || len(u.Rows) != 0 {
			t.Errorf("another team's token by %s: %+v %v, want no row", groupBy, u, err)
		}
	}
	metrics := call(t, h.URL, "GET", "/metrics", "", nil, nil)
	if want := `gpulayer_team_gpu_seconds_total{gpu_model="NVIDIA H100 80GB HBM3",team="vision"} 1200`; !strings.Contains(string(metrics.raw), want) {
		t.Errorf("metrics lack %s", want)
	}
	for _, bad := range []string{"?from=yesterday", "?to=2026-13-01T00:00:00Z", "?group_by=colour", "?from=2026-12-06T10:00:00Z&to=2026-12-06T09:00:00Z",
		"?from=2024-01-01T00:00:00Z&to=2026-01-01T00:00:00Z", "?group_by=team&group_by=job", "?since=1"} {
		wantCode(t, "usage"+bad, call(t, h.URL, "GET", "/v1/usage"+bad, aliceTok, nil, nil), 400, api.CodeInvalidArgument)
	}
}
