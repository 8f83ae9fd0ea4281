package integration

// The agent's ways to its first credential besides a shared join token
// (seed 000's known gap): allowlist enrollment with no token, a
// single-use instance token, and a join token that requires approval, in
// which case the agent waits instead of exiting.

import (
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

func TestAgentEnrollsThroughTheAllowlist(t *testing.T) {
	h := startCoordinator(t)
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	if _, err := admin.PutCluster(ctx, api.ClusterRequest{ClusterKey: "local", AllowedSourceCIDRs: []string{"127.0.0.0/8"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CreateEnrollment(ctx, api.EnrollmentRequest{ClusterKey: "local", ExternalWorkerKey: "vm-loop", PublicIP: "127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	opts := agentOpts{enroll: true, clusterKey: "local", externalWorkerKey: "vm-loop"}
	a := startAgent(t, h.URL, "", "enrolled", "dgxh100", opts)
	coordinatortest.WaitFor(t, 10*time.Second, "enrollment", func() bool { return a.agent.WorkerID() == "enrolled" })
	runOn(t, h, "enrolled")
	if err := a.stop(); err != nil {
		t.Fatal(err)
	}
	// A restart resumes the persisted credential; it does not enroll again
	// (the row is enrolled, and would refuse).
	opts.dataDir = a.dataDir
	again := startAgent(t, h.URL, "", "enrolled", "dgxh100", opts)
	coordinatortest.WaitFor(t, 10*time.Second, "resume", func() bool { return again.agent.WorkerID() == "enrolled" })
	if w, err := admin.Worker(ctx, "enrolled"); err != nil || w.Origin != api.OriginEnrollment || w.ExternalWorkerKey != "vm-loop" {
		t.Fatalf("worker %+v %v", w, err)
	}
}

func TestAgentRegistersWithAnInstanceToken(t *testing.T) {
	h := startCoordinator(t)
	ctx := t.Context()
	it, err := h.Client(t, h.AdminToken).CreateInstanceToken(ctx, api.CreateInstanceTokenRequest{InstanceID: "i-0042"})
	if err != nil {
		t.Fatal(err)
	}
	a := startAgent(t, h.URL, "", "provided", "dgxh100", agentOpts{instanceToken: it.Token, instanceID: "i-0042"})
	coordinatortest.WaitFor(t, 10*time.Second, "registration", func() bool { return a.agent.WorkerID() == "provided" })
	runOn(t, h, "provided")
	w, err := h.Client(t, h.AdminToken).Worker(ctx, "provided")
	if err != nil || w.Origin != api.OriginProvider || w.InstanceID != "i-0042" {
		t.Fatalf("worker %+v %v", w, err)
	}
	// The token was single use: a second instance cannot reuse it.
	b := newAgent(t, h.URL, "", "copycat", "dgxh100", agentOpts{instanceToken: it.Token, instanceID: "i-0042"})
	if err := b.agent.Run(ctx); err == nil {
		t.Fatal("a used instance token registered a second worker")
	}
}

func TestAgentWaitsForApproval(t *testing.T) {
	h := startCoordinator(t)
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	tok, err := admin.CreateToken(ctx, api.CreateTokenRequest{Kind: api.TokenKindJoin, Name: "gated", RequiresApproval: true, MaxUses: 1})
	if err != nil {
		t.Fatal(err)
	}
	a := startAgent(t, h.URL, tok.Token, "waiting", "dgxh100")
	coordinatortest.WaitFor(t, 10*time.Second, "a pending registration", func() bool {
		w, err := admin.Worker(ctx, "waiting")
		return err == nil && w.Status == api.WorkerPending
	})
	job, err := admin.SubmitJob(ctx, execSpec(`echo approved`, 0))
	if err != nil {
		t.Fatal(err)
	}
	// A job waits; the agent, awaiting approval, acts as no one yet (had
	// it exited instead of waiting, the job below would never run).
	if j, _ := admin.Job(ctx, job.ID); j.State != api.TaskPending || a.agent.WorkerID() != "" {
		t.Fatalf("before approval: job %s, agent acting as %q", j.State, a.agent.WorkerID())
	}
	if _, err := admin.ApproveWorker(ctx, "waiting"); err != nil {
		t.Fatal(err)
	}
	if j := waitJob(t, admin, job.ID, terminal, "the job after approval"); j.State != api.TaskSucceeded || j.Tasks[0].ExecutedBy != "waiting" {
		t.Fatalf("job %s executed by %q", j.State, j.Tasks[0].ExecutedBy)
	}
}
