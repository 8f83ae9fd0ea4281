package integration

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/agent"
	"github.com/gpulayer/gpulayer/agent/pluginhost"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// stop ends the agent and returns what Run returned.
func (ra *runningAgent) stop() error { return ra.stopFn(true) }

func TestAgentRestartResumesItsCredential(t *testing.T) {
	h := startCoordinator(t)
	admin := h.Client(t, h.AdminToken)
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "node")

	first := startAgent(t, h.URL, h.JoinToken, "node-r", "dgxh100", agentOpts{dataDir: dir})
	coordinatortest.WaitFor(t, 10*time.Second, "registration", func() bool { return first.agent.WorkerID() == "node-r" })
	if err := first.stop(); err != nil {
		t.Fatalf("first run: %v", err)
	}
	info, err := os.Stat(agent.CredentialPath(dir))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("credential file: %v mode %v, want 0600", err, info.Mode())
	}

	// No join token this time: the agent must resume with the probe.
	second := startAgent(t, h.URL, "", "node-r", "dgxh100", agentOpts{dataDir: dir})
	coordinatortest.WaitFor(t, 10*time.Second, "resume", func() bool { return second.agent.WorkerID() == "node-r" })
	job, err := admin.SubmitJob(ctx, execSpec(`echo resumed`, 1))
	if err != nil {
		t.Fatal(err)
	}
	if j := waitJob(t, admin, job.ID, terminal, "job on the resumed agent"); j.State != api.TaskSucceeded || j.Tasks[0].ExecutedBy != "node-r" {
		t.Fatalf("job %s executed by %s", j.State, j.Tasks[0].ExecutedBy)
	}
	workers, err := admin.Workers(ctx)
	if err != nil || len(workers) != 1 {
		t.Fatalf("workers after restart: %d %v (a restart must not register again)", len(workers), err)
	}
	if err := second.stop(); err != nil {
		t.Fatalf("second run: %v", err)
	}

	// A credential the coordinator rejects stops the agent with advice,
	// even with a join token at hand: no silent re-registration.
	tok := credentialOf(t, first)
	forged := tok[:len(tok)-64] + strings.Repeat("0", 64) // same id, wrong secret
	b, _ := json.Marshal(map[string]string{"worker_id": "node-r", "worker_token": forged})
	if err := os.WriteFile(agent.CredentialPath(dir), b, 0o600); err != nil {
		t.Fatal(err)
	}
	third := newAgent(t, h.URL, h.JoinToken, "node-r", "dgxh100", agentOpts{dataDir: dir})
	err = third.agent.Run(ctx)
	if !errors.Is(err, agent.ErrCredentialRejected) || !strings.Contains(err.Error(), "gpulayer worker reissue node-r") {
		t.Fatalf("run with a rejected credential: %v", err)
	}
	if workers, _ := admin.Workers(ctx); len(workers) != 1 {
		t.Fatalf("rejected credential led to a new registration: %d workers", len(workers))
	}
}

func buildPlugin(t *testing.T, pkg, name string) string {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, pluginhost.BinaryPrefix+name)
	cmd := exec.Command("go", "build", "-o", out, pkg)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", pkg, err, b)
	}
	return dir
}

func TestPluginCrashFailsTheTaskAndTheAgentCarriesOn(t *testing.T) {
	pluginDir := buildPlugin(t, "github.com/gpulayer/gpulayer/agent/pluginhost/testdata/crashplugin", "crash")
	h := startCoordinator(t)
	admin := h.Client(t, h.AdminToken)
	ctx := t.Context()
	startAgent(t, h.URL, h.JoinToken, "node-c", "dgxh100", agentOpts{pluginDir: pluginDir})

	crash, err := admin.SubmitJob(ctx, api.JobSpec{Executor: "crash", Config: []byte(`{"crash_running":true}`), MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	j := waitJob(t, admin, crash.ID, terminal, "crashing job to end")
	if j.State != api.TaskFailed || !strings.Contains(j.Tasks[0].Reason, `executor plugin "crash" exited unexpectedly`) {
		t.Fatalf("crashed job: %s, reason %q", j.State, j.Tasks[0].Reason)
	}

	// The agent lives on: the exec plugin still works, and the crashed
	// plugin is launched afresh for its next task.
	ok, err := admin.SubmitJob(ctx, execSpec(`echo still here`, 1))
	if err != nil {
		t.Fatal(err)
	}
	if j := waitJob(t, admin, ok.ID, terminal, "exec job after the crash"); j.State != api.TaskSucceeded {
		t.Fatalf("exec job after the crash: %s", j.State)
	}
	again, err := admin.SubmitJob(ctx, api.JobSpec{Executor: "crash", Config: []byte(`{}`), MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	waitJob(t, admin, again.ID, func(j api.Job) bool { return strings.Contains(logsOf(t, admin, again.ID), "running") }, "relaunched plugin to run a task")
	if _, err := admin.CancelJob(context.Background(), again.ID); err != nil {
		t.Fatal(err)
	}
	if j := waitJob(t, admin, again.ID, terminal, "cancel on the relaunched plugin"); j.State != api.TaskCancelled {
		t.Fatalf("relaunched plugin's task: %s", j.State)
	}
}
