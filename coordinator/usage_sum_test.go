package coordinator_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/coordinator/preempt"
	"github.com/gpulayer/gpulayer/coordinator/sched/preemption"
	"github.com/gpulayer/gpulayer/internal/clock"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// usageRig drives a worker with four whole GPUs against a cluster whose
// nodes share one fake clock, so that attempt times are exact.
type usageRig struct {
	t      *testing.T
	ctx    context.Context
	clk    *clock.Fake
	worker *client.Client
	// client is a client of the cluster with a token.
	client func(token string) *client.Client
}

// run acquires the next task, starts it, lets d pass on the clock and
// ends the attempt with end.
func (r usageRig) run(jobID string, d time.Duration, end func(api.Assignment) error) {
	r.t.Helper()
	acq, err := r.worker.Acquire(r.ctx, api.AcquireRequest{})
	if err != nil || acq.Task == nil || acq.Task.JobID != jobID {
		r.t.Fatalf("acquire for %s: %+v %v", jobID, acq, err)
	}
	if err := r.worker.Start(r.ctx, acq.Task.ID, acq.Task.AttemptID); err != nil {
		r.t.Fatal(err)
	}
	r.clk.Advance(d)
	if err := end(*acq.Task); err != nil {
		r.t.Fatalf("end %s: %v", acq.Task.ID, err)
	}
}

func (r usageRig) finish(task api.Assignment) error {
	_, err := r.worker.Finish(r.ctx, task.ID, api.FinishRequest{AttemptID: task.AttemptID})
	return err
}

func (r usageRig) fail(task api.Assignment) error {
	_, err := r.worker.Fail(r.ctx, task.ID, api.FailRequest{AttemptID: task.AttemptID, Reason: "CUDA error: an illegal memory access"})
	return err
}

// lose ends the attempt lost: its first GPU failed under it.
func (r usageRig) lose(task api.Assignment) error {
	_, err := r.worker.Fail(r.ctx, task.ID, api.FailRequest{AttemptID: task.AttemptID, Reason: "XID 79", GPUFault: task.Devices[0]})
	return err
}

// TestUsageEqualsSumOfAttempts runs a mixed workload on a three-node Raft
// cluster over TCP: jobs of two teams with one and two GPUs per task,
// that succeed, fail and are retried, lose an attempt to a GPU fault and
// run again, fail for good, one submitted and run after the leader is
// stopped, and a borrowing task preempted by the new leader for a team
// under its quota, then run again. Then GET /v1/usage, asked of every surviving node, equals,
// team by team, the sum over every attempt of the task records of (end -
// start) × its GPUs, computed here from GET /v1/jobs/{id} alone, and its
// preempted GPU-seconds the same sum over the attempts that ended
// preempted.
// Every node answers the same.
func TestUsageEqualsSumOfAttempts(t *testing.T) {
	start := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	clk := clock.NewFake(start)
	c := coordinatortest.StartCluster(t, 3, coordinatortest.Options{Tweak: func(cfg *coordinator.Config) {
		cfg.Clock = clk
		// The worker does not heartbeat: the clock's jumps must not make
		// it offline.
		cfg.HeartbeatInterval = time.Hour
		// Preempt at once, looking as the fake clock moves.
		cfg.Preemption = preempt.Config{Options: preemption.Options{MinRuntime: -1}, Interval: time.Second, Settle: time.Second}
	}})
	ctx := t.Context()
	admin := c.Client(c.AdminToken)
	if _, err := admin.CreateTeam(ctx, api.CreateTeamRequest{Name: "vision"}); err != nil {
		t.Fatal(err)
	}
	tok, err := admin.CreateToken(ctx, api.CreateTokenRequest{Kind: api.TokenKindClient, Name: "vision-ci", Roles: []string{"submit"}, Team: "vision"})
	if err != nil {
		t.Fatal(err)
	}
	vision := c.Client(tok.Token)
	devs := make([]api.Device, 4)
	for i := range devs {
		devs[i] = api.Device{Index: i, UUID: fmt.Sprintf("GPU-sum-%d", i), Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559, Healthy: true, Health: api.HealthHealthy}
	}
	reg, err := c.Client(c.JoinToken).Register(ctx, api.RegisterRequest{WorkerID: "gpu-1", Capabilities: []string{"*"}, Executors: []string{"exec"}, Devices: devs})
	if err != nil {
		t.Fatal(err)
	}
	r := usageRig{t: t, ctx: ctx, clk: clk, worker: c.Client(reg.WorkerToken), client: c.Client}
	submit := func(cl *client.Client, gpus, attempts int) string {
		t.Helper()
		job, err := cl.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`), Resources: &api.Resources{GPUs: gpus},
			MaxAttempts: attempts, LeaseSeconds: 3600})
		if err != nil {
			t.Fatal(err)
		}
		return job.ID
	}
	var jobs []string
	// Succeeds at once: 1 GPU × 60 s.
	j := submit(vision, 1, 1)
	r.run(j, 60*time.Second, r.finish)
	jobs = append(jobs, j)
	// Fails, is retried, succeeds: 2 GPUs × 30 s, then × 45 s.
	j = submit(vision, 2, 2)
	r.run(j, 30*time.Second, r.fail)
	r.run(j, 45*time.Second, r.finish)
	jobs = append(jobs, j)
	// Loses an attempt to a GPU fault, runs again on a healthy GPU.
	j = submit(admin, 1, 1)
	r.run(j, 20*time.Second, r.lose)
	r.run(j, 10*time.Second, r.finish)
	jobs = append(jobs, j)
	// Fails for good after its two attempts.
	j = submit(vision, 1, 2)
	r.run(j, 7*time.Second, r.fail)
	r.run(j, 9*time.Second, r.fail)
	jobs = append(jobs, j)
	// Started before the leader goes and ended after: the attempt's
	// start is from one leader's term, its end from the next.
	j = submit(vision, 2, 1)
	acq, err := r.worker.Acquire(ctx, api.AcquireRequest{})
	if err != nil || acq.Task == nil || acq.Task.JobID != j {
		t.Fatalf("acquire for %s: %+v %v", j, acq, err)
	}
	if err := r.worker.Start(ctx, acq.Task.ID, acq.Task.AttemptID); err != nil {
		t.Fatal(err)
	}
	jobs = append(jobs, j)

	old := c.Leader()
	c.Stop(old)
	c.WaitLeader(15 * time.Second)
	clk.Advance(33 * time.Second)
	if err := r.finish(*acq.Task); err != nil {
		t.Fatal(err)
	}
	// After the failover: a job of default's, 1 GPU × 15 s.
	j = submit(admin, 1, 1)
	r.run(j, 15*time.Second, r.finish)
	jobs = append(jobs, j)
	// Preempted: vision (no quota) borrows the three GPUs still offered
	// (the fourth failed above); research, owed
	// one, submits; the new leader preempts vision's attempt, which ends
	// preempted when the worker reports its end; research's task runs on
	// the GPU held for it, then vision's runs again whole.
	j, rj := r.preemptBorrower(admin, vision, submit)
	r.run(rj, 12*time.Second, r.finish)
	r.run(j, 8*time.Second, r.finish)
	jobs = append(jobs, j, rj)

	want, wantPreempted, states := expectedUsage(t, admin, jobs)
	if states["succeeded"] != 7 || states["failed"] != 3 || states["lost"] != 1 || states["preempted"] != 1 {
		t.Fatalf("attempts ended %v, want 7 succeeded, 3 failed, 1 lost and 1 preempted: the workload did not run as written", states)
	}
	q := client.UsageQuery{From: start.Add(-time.Hour), To: start.Add(2 * time.Hour), GroupBy: api.UsageByTeam}
	for _, n := range c.Nodes {
		if n == old {
			continue
		}
		cl, err := client.New(client.Config{Addrs: []string{n.URL}, Token: c.AdminToken})
		if err != nil {
			t.Fatal(err)
		}
		u, err := cl.Usage(ctx, q)
		if err != nil {
			t.Fatalf("usage at %s: %v", n.ID, err)
		}
		got, gotPreempted := map[string]float64{}, map[string]float64{}
		for _, row := range u.Rows {
			got[row.Team] += row.GPUSeconds
			gotPreempted[row.Team] += row.PreemptedGPUSeconds
		}
		for team := range got {
			if gotPreempted[team] != wantPreempted[team] {
				t.Errorf("%s: team %s has %g preempted GPU-seconds by the usage API, %g by its task records", n.ID, team, gotPreempted[team], wantPreempted[team])
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s answers teams %v, want %v", n.ID, got, want)
		}
		for team, w := range want {
			if got[team] != w {
				t.Errorf("%s: team %s used %g GPU-seconds by the usage API, %g by its task records", n.ID, team, got[team], w)
			}
		}
	}
	t.Logf("attempts %v; GPU-seconds by team %v (preempted %v), equal at every node", states, want, wantPreempted)
}

// preemptBorrower runs a three-GPU job of vision's (a team with no quota:
// every GPU it holds is borrowed), then submits a one-GPU job for team
// research (quota 1) and waits, moving the clock, until the leader's
// preemption loop tells the worker to stop vision's attempt; the worker
// then reports its end (the task's exit on SIGTERM). It answers both
// jobs' ids.
func (r usageRig) preemptBorrower(admin, vision *client.Client, submit func(*client.Client, int, int) string) (string, string) {
	t, ctx := r.t, r.ctx
	t.Helper()
	if _, err := admin.CreateTeam(ctx, api.CreateTeamRequest{Name: "research", Quota: api.QuotaGPUs(1)}); err != nil {
		t.Fatal(err)
	}
	tok, err := admin.CreateToken(ctx, api.CreateTokenRequest{Kind: api.TokenKindClient, Name: "research-ci", Roles: []string{"submit"}, Team: "research"})
	if err != nil {
		t.Fatal(err)
	}
	j := submit(vision, 3, 1)
	acq, err := r.worker.Acquire(ctx, api.AcquireRequest{})
	if err != nil || acq.Task == nil || acq.Task.JobID != j {
		t.Fatalf("acquire for %s: %+v %v", j, acq, err)
	}
	if err := r.worker.Start(ctx, acq.Task.ID, acq.Task.AttemptID); err != nil {
		t.Fatal(err)
	}
	r.clk.Advance(50 * time.Second)
	rj := submit(r.client(tok.Token), 1, 1)
	coordinatortest.WaitFor(t, 15*time.Second, "the leader to preempt vision's borrowed attempt", func() bool {
		hb, err := r.worker.Heartbeat(ctx, api.HeartbeatRequest{RunningTaskIDs: []string{acq.Task.ID}})
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(hb.PreemptTaskIDs, acq.Task.ID) {
			return true
		}
		r.clk.Advance(time.Second)
		return false
	})
	r.clk.Advance(5 * time.Second) // the task's grace, used in part
	if _, err := r.worker.Fail(ctx, acq.Task.ID, api.FailRequest{AttemptID: acq.Task.AttemptID, Reason: "exit status 143"}); err != nil {
		t.Fatal(err)
	}
	return j, rj
}

// expectedUsage sums, from the jobs' task records alone, (end - start) ×
// GPUs of every attempt that started and ended, by team (and again, for
// the attempts that ended preempted, apart), and counts those attempts
// by the state they ended in. A task's GPUs are the devices its attempt was given
// (whole GPUs here: each counts 1).
func expectedUsage(t *testing.T, admin *client.Client, ids []string) (map[string]float64, map[string]float64, map[string]int) {
	t.Helper()
	out, preempted, n := map[string]float64{}, map[string]float64{}, map[string]int{}
	for _, id := range ids {
		job, err := admin.Job(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range job.Tasks {
			for _, a := range task.Attempts {
				if a.StartedAt == "" || a.EndedAt == "" {
					continue
				}
				s, err1 := time.Parse(time.RFC3339Nano, a.StartedAt)
				e, err2 := time.Parse(time.RFC3339Nano, a.EndedAt)
				if err1 != nil || err2 != nil {
					t.Fatalf("attempt %s times %q %q", a.AttemptID, a.StartedAt, a.EndedAt)
				}
				gpuSeconds := e.Sub(s).Seconds() * float64(len(a.Devices))
				out[job.Team] += gpuSeconds
				if a.State == api.AttemptPreempted {
					preempted[job.Team] += gpuSeconds
				}
				n[a.State]++
			}
		}
	}
	return out, preempted, n
}
