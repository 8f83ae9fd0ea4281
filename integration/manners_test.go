package integration

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/agent"
	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// An agent started before its coordinator waits for it, saying so at
// each try, and registers once it answers; before, it was silent for 30 s
// and then exited 1.
func TestAgentWaitsForItsCoordinator(t *testing.T) {
	addr := coordinatortest.FreeAddr(t)
	h := coordinatortest.Start(t, coordinatortest.Options{Tweak: func(c *coordinator.Config) {
		c.HTTPAddr = addr
		c.HeartbeatInterval = 100 * time.Millisecond
	}})
	h.Stop() // down, with its tokens known, until the agent has tried twice

	var logs syncBuffer
	a, err := agent.New(agent.Config{
		Coordinators:         []string{"http://" + addr},
		JoinToken:            h.JoinToken,
		DataDir:              t.TempDir(),
		WorkerID:             "early",
		AcquireWait:          time.Second,
		Devices:              noDevices{},
		Executors:            noExecutors{},
		Logger:               slog.New(slog.NewTextHandler(&logs, nil)),
		AllowSharedUserTasks: os.Geteuid() != 0,
		TaskUIDBase:          nextTaskUIDBase(),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	coordinatortest.WaitFor(t, 60*time.Second, "the agent to try twice", func() bool {
		select {
		case err := <-done:
			t.Fatalf("the agent gave up while its coordinator was down: %v", err)
		default:
		}
		return strings.Count(logs.String(), "no coordinator reachable yet") >= 2
	})
	if !strings.Contains(logs.String(), addr) {
		t.Errorf("the agent's log does not name the address it tries:\n%s", logs.String())
	}
	h = coordinatortest.Restart(t, h)
	admin := h.Client(t, h.AdminToken)
	coordinatortest.WaitFor(t, 60*time.Second, "the agent to register once its coordinator is up", func() bool {
		w, err := admin.Worker(t.Context(), "early")
		return err == nil && w.Status == api.WorkerReady && a.WorkerID() == "early"
	})
}

// A running agent whose credential an admin reissued takes the new one
// without a restart: from its credential file, where the operator writes
// it, or by reissuing it itself when it holds an admin token. Before, it
// failed every heartbeat until restarted.
func TestRunningAgentTakesAReissuedCredential(t *testing.T) {
	for _, mode := range []string{"written to the credential file", "reissued by the agent's admin token"} {
		t.Run(mode, func(t *testing.T) {
			h := startCoordinator(t)
			admin := h.Client(t, h.AdminToken)
			var opts agentOpts
			if strings.HasPrefix(mode, "reissued") {
				opts.adminToken = h.AdminToken
			}
			ra := startAgent(t, h.URL, h.JoinToken, "rotated", "dgxh100", opts)
			coordinatortest.WaitFor(t, 30*time.Second, "the agent to be ready", func() bool {
				w, err := admin.Worker(t.Context(), "rotated")
				return err == nil && w.Status == api.WorkerReady
			})

			out, err := admin.ReissueWorker(t.Context(), "rotated")
			if err != nil {
				t.Fatal(err)
			}
			if opts.adminToken == "" {
				b, err := json.Marshal(map[string]string{"worker_id": out.WorkerID, "worker_token": out.WorkerToken})
				if err != nil {
					t.Fatal(err)
				}
				// As an operator would: a new file, renamed into place.
				tmp := agent.CredentialPath(ra.dataDir) + ".new"
				if err := os.WriteFile(tmp, b, 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(tmp, agent.CredentialPath(ra.dataDir)); err != nil {
					t.Fatal(err)
				}
			}
			job, err := admin.SubmitJob(t.Context(), api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`),
				Target: &api.Target{Kind: api.TargetWorker, ID: "rotated"}})
			if err != nil {
				t.Fatal(err)
			}
			waitJob(t, admin, job.ID, func(j api.Job) bool { return j.Tasks[0].State == api.TaskSucceeded }, "the job to succeed on the agent with its new credential")
		})
	}
}
