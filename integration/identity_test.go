package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/agent"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/executor"
)

// Agent start-up recovery (seed 002 D.1, 8.2 and 6.7): a persisted
// credential the coordinator refuses, or one that belongs to another worker,
// is repaired by reissue when the agent holds an admin token, and stops the
// agent with advice when it does not. It never registers a second identity.

func writeCredential(t *testing.T, dir, workerID, token string) {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"worker_id": workerID, "worker_token": token})
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(agent.CredentialPath(dir), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func workerCount(t *testing.T, h *coordinatortest.Harness) int {
	t.Helper()
	ws, err := h.Client(t, h.AdminToken).Workers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return len(ws)
}

func runOn(t *testing.T, h *coordinatortest.Harness, workerID string) {
	t.Helper()
	admin := h.Client(t, h.AdminToken)
	spec := execSpec(`echo on-`+workerID, 0)
	spec.Target = &api.Target{Kind: api.TargetWorker, ID: workerID}
	job, err := admin.SubmitJob(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if j := waitJob(t, admin, job.ID, terminal, "job on "+workerID); j.State != api.TaskSucceeded || j.Tasks[0].ExecutedBy != workerID {
		t.Fatalf("job %s executed by %q", j.State, j.Tasks[0].ExecutedBy)
	}
}

// Seed 002 §6.7, first branch: the persisted credential answers 401
// (an admin reissued it elsewhere).
func TestAgentReissuesARefusedCredential(t *testing.T) {
	h := startCoordinator(t)
	admin := h.Client(t, h.AdminToken)
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "node")
	first := startAgent(t, h.URL, h.JoinToken, "node-r", "dgxh100", agentOpts{dataDir: dir})
	coordinatortest.WaitFor(t, 10*time.Second, "registration", func() bool { return first.agent.WorkerID() == "node-r" })
	if err := first.stop(); err != nil {
		t.Fatal(err)
	}
	old := credentialOf(t, first)
	if _, err := admin.ReissueWorker(ctx, "node-r"); err != nil {
		t.Fatal(err)
	}

	noAdmin := newAgent(t, h.URL, h.JoinToken, "node-r", "dgxh100", agentOpts{dataDir: dir})
	err := noAdmin.agent.Run(ctx)
	if !errors.Is(err, agent.ErrCredentialRejected) || !strings.Contains(err.Error(), "gpulayer worker reissue node-r") || !strings.Contains(err.Error(), "GPULAYER_ADMIN_TOKEN") {
		t.Fatalf("run without an admin token: %v", err)
	}

	second := startAgent(t, h.URL, "", "node-r", "dgxh100", agentOpts{dataDir: dir, adminToken: h.AdminToken})
	coordinatortest.WaitFor(t, 10*time.Second, "resume by reissue", func() bool { return second.agent.WorkerID() == "node-r" })
	if now := credentialOf(t, second); now == old {
		t.Fatal("the persisted credential was not replaced")
	}
	runOn(t, h, "node-r")
	if n := workerCount(t, h); n != 1 {
		t.Fatalf("%d workers: recovery registered a new one", n)
	}
	if err := second.stop(); err != nil {
		t.Fatal(err)
	}

	// A revoked worker is not brought back by an admin token.
	if _, err := admin.RevokeWorker(ctx, "node-r"); err != nil {
		t.Fatal(err)
	}
	third := newAgent(t, h.URL, "", "node-r", "dgxh100", agentOpts{dataDir: dir, adminToken: h.AdminToken})
	if err := third.agent.Run(ctx); !errors.Is(err, agent.ErrRevoked) {
		t.Fatalf("run of a revoked worker: %v, want ErrRevoked", err)
	}
}

// Seed 002 §6.7, second branch: the credential is valid but belongs to
// another worker. The probe answers 200 for that other worker; the agent
// must treat it as failure, not carry on as the wrong identity.
func TestAgentRefusesACredentialOfAnotherWorker(t *testing.T) {
	h := startCoordinator(t)
	ctx := t.Context()
	root := t.TempDir()
	dirA, dirB := filepath.Join(root, "a"), filepath.Join(root, "b")
	a := startAgent(t, h.URL, h.JoinToken, "node-a", "dgxh100", agentOpts{dataDir: dirA})
	b := startAgent(t, h.URL, h.JoinToken, "node-b", "dgxh100", agentOpts{dataDir: dirB})
	coordinatortest.WaitFor(t, 10*time.Second, "registrations", func() bool {
		return a.agent.WorkerID() == "node-a" && b.agent.WorkerID() == "node-b"
	})
	for _, ra := range []*runningAgent{a, b} {
		if err := ra.stop(); err != nil {
			t.Fatal(err)
		}
	}
	tokB := credentialOf(t, b)
	writeCredential(t, dirA, "node-a", tokB) // the file says node-a; the token is node-b's

	wrong := newAgent(t, h.URL, h.JoinToken, "node-a", "dgxh100", agentOpts{dataDir: dirA})
	err := wrong.agent.Run(ctx)
	if !errors.Is(err, agent.ErrCredentialRejected) || !strings.Contains(err.Error(), "authenticates as worker node-b") || !strings.Contains(err.Error(), "gpulayer worker reissue node-a") {
		t.Fatalf("run with another worker's credential: %v", err)
	}
	if wrong.agent.WorkerID() != "" {
		t.Fatalf("agent took on identity %q", wrong.agent.WorkerID())
	}

	fixed := startAgent(t, h.URL, "", "node-a", "dgxh100", agentOpts{dataDir: dirA, adminToken: h.AdminToken})
	coordinatortest.WaitFor(t, 10*time.Second, "resume by reissue", func() bool { return fixed.agent.WorkerID() == "node-a" })
	if credentialOf(t, fixed) == tokB {
		t.Fatal("the persisted credential was not replaced")
	}
	runOn(t, h, "node-a")
	// node-b's credential was not touched by node-a's reissue.
	if self, err := h.Client(t, tokB).Self(ctx); err != nil || self.WorkerID != "node-b" {
		t.Fatalf("node-b's credential after node-a's reissue: %+v %v", self, err)
	}
	if n := workerCount(t, h); n != 2 {
		t.Fatalf("%d workers, want 2", n)
	}
}

// A lost credential file with the worker id still registered: registering
// hands out nothing (no takeover), so only an admin token recovers it.
func TestAgentRecoversALostCredentialWithAdminToken(t *testing.T) {
	h := startCoordinator(t)
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "node")
	first := startAgent(t, h.URL, h.JoinToken, "node-l", "dgxh100", agentOpts{dataDir: dir})
	coordinatortest.WaitFor(t, 10*time.Second, "registration", func() bool { return first.agent.WorkerID() == "node-l" })
	if err := first.stop(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(agent.CredentialPath(dir)); err != nil {
		t.Fatal(err)
	}
	lost := newAgent(t, h.URL, h.JoinToken, "node-l", "dgxh100", agentOpts{dataDir: dir})
	if err := lost.agent.Run(ctx); !errors.Is(err, agent.ErrCredentialRejected) || !strings.Contains(err.Error(), "already registered") {
		t.Fatalf("run with a lost credential: %v", err)
	}
	back := startAgent(t, h.URL, h.JoinToken, "node-l", "dgxh100", agentOpts{dataDir: dir, adminToken: h.AdminToken})
	coordinatortest.WaitFor(t, 10*time.Second, "recovery", func() bool { return back.agent.WorkerID() == "node-l" })
	runOn(t, h, "node-l")
	if n := workerCount(t, h); n != 1 {
		t.Fatalf("%d workers, want 1", n)
	}
}

// noDevices and noExecutors let an agent run its identity steps without
// GPUs or plugins.
type noDevices struct{}

func (noDevices) Devices(context.Context) ([]api.Device, error) { return nil, nil }

type noExecutors struct{}

func (noExecutors) Names() []string { return []string{"exec"} }
func (noExecutors) Get(context.Context, string) (executor.Executor, error) {
	return nil, errors.New("no executors in this test")
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The admin token and the reissued credential never reach the agent's log.
func TestAgentNeverLogsTheAdminToken(t *testing.T) {
	h := startCoordinator(t)
	dir := t.TempDir()
	reg, err := h.Client(t, h.JoinToken).Register(t.Context(), api.RegisterRequest{WorkerID: "node-s", Capabilities: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	a, err := agent.New(agent.Config{
		Coordinators: []string{h.URL},
		JoinToken:    h.JoinToken,
		AdminToken:   h.AdminToken,
		DataDir:      dir,
		WorkerID:     "node-s",
		AcquireWait:  time.Second,
		Devices:      noDevices{},
		Executors:    noExecutors{},
		Logger:       slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		// As root tasks get uids of their own; otherwise accept shared.
		AllowSharedUserTasks: os.Geteuid() != 0,
		TaskUIDBase:          nextTaskUIDBase(),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	coordinatortest.WaitFor(t, 10*time.Second, "recovery", func() bool { return a.WorkerID() == "node-s" })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(agent.CredentialPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		WorkerToken string `json:"worker_token"`
	}
	if err := json.Unmarshal(b, &p); err != nil || p.WorkerToken == "" || p.WorkerToken == reg.WorkerToken {
		t.Fatalf("persisted credential %q %v", p.WorkerToken, err)
	}
	out := logs.String()
	if !strings.Contains(out, "reissu") {
		t.Fatalf("the agent did not take the reissue path:\n%s", out)
	}
	for name, secret := range map[string]string{"admin token": h.AdminToken, "join token": h.JoinToken, "worker token": p.WorkerToken} {
		if strings.Contains(out, secret) || strings.Contains(out, secret[len(secret)-64:]) {
			t.Errorf("the log holds the %s", name)
		}
	}
}

// An agent given no worker id registers under its host's name; a second
// host of the same name, or a name the id grammar refuses, gets a
// generated id instead of reissuing or failing.
func TestAgentDefaultsItsIDToTheHostName(t *testing.T) {
	h := startCoordinator(t)
	first := startAgent(t, h.URL, h.JoinToken, "", "dgxh100", agentOpts{hostname: "GPU-Node-7.example.com"})
	coordinatortest.WaitFor(t, 10*time.Second, "registration", func() bool { return first.agent.WorkerID() != "" })
	if id := first.agent.WorkerID(); id != "gpu-node-7" {
		t.Fatalf("worker id %q, want the host name gpu-node-7", id)
	}
	for _, host := range []string{"gpu-node-7", "admin", "bad host"} {
		other := startAgent(t, h.URL, h.JoinToken, "", "dgxh100", agentOpts{hostname: host})
		coordinatortest.WaitFor(t, 10*time.Second, "registration of "+host, func() bool { return other.agent.WorkerID() != "" })
		if id := other.agent.WorkerID(); id == "gpu-node-7" || id == host || !strings.HasPrefix(id, "w") {
			t.Fatalf("host %q registered as %q, want a generated id", host, id)
		}
	}
	if n := workerCount(t, h); n != 4 {
		t.Fatalf("%d workers, want 4", n)
	}
	runOn(t, h, "gpu-node-7")
}
