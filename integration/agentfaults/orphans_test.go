//go:build linux

package agentfaults

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/agent"
	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// fastLeases has agents heartbeat every half second, so that two-second
// leases hold while agents run and lapse soon after they stop.
func fastLeases(c *coordinator.Config) { c.HeartbeatInterval = 500 * time.Millisecond }

// Task uids: ranges of their own, away from the default 61000 that other
// tests' agents on this host may use (an agent kills what runs under its
// task uids).
const (
	campaignUIDBase = 62000
	soloUIDBase     = 62100
)

// taskModes are the ways a root agent runs its tasks; an agent that is not
// root has one, its own user.
func taskModes() []struct{ name, taskUser string } {
	if os.Geteuid() != 0 {
		return []struct{ name, taskUser string }{{"shared user", ""}}
	}
	return []struct{ name, taskUser string }{{"uid per slot", ""}, {"one task user", strconv.Itoa(soloUIDBase + 500)}}
}

// needTools skips a test that starts agents where their tasks cannot run:
// the lock script needs sh and flock(1), the checks need Linux's /proc.
func needTools(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts coordinators and agent processes")
	}
	for _, tool := range []string{"sh", "flock", "sleep"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found: %v", tool, err)
		}
	}
}

func waitStarted(t *testing.T, shared, key string) event {
	t.Helper()
	var ev event
	coordinatortest.WaitFor(t, 60*time.Second, key+" to start", func() bool {
		evs, _ := readEvents(shared)
		i := slices.IndexFunc(evs, func(e event) bool { return e.Kind == "start" && e.Key == key })
		if i >= 0 {
			ev = evs[i]
		}
		return i >= 0
	})
	return ev
}

func waitTaskEnded(t *testing.T, admin *client.Client, jobID string) api.Task {
	t.Helper()
	var tk api.Task
	coordinatortest.WaitFor(t, 60*time.Second, "job "+jobID+" to end", func() bool {
		j, err := admin.Job(t.Context(), jobID)
		if err != nil || len(j.Tasks) != 1 {
			return false
		}
		tk = j.Tasks[0]
		return terminal(tk.State)
	})
	return tk
}

func noOverlap(t *testing.T, shared string) []event {
	t.Helper()
	evs, err := readEvents(shared)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Kind == "overlap" {
			t.Errorf("two processes held one lock: %v (events %v)", e, evs)
		}
	}
	return evs
}

// An agent killed with SIGKILL leaves nothing running: its plugin process
// and its tasks' processes go with it (before, they ran on as orphans).
// Restarted on the same data dir, it resumes as the same worker with the
// same credential, and the task, handed out again once its lease lapsed,
// succeeds there without ever running twice at once.
func TestAgentSIGKILLLeavesNoOrphans(t *testing.T) {
	needTools(t)
	for _, mode := range taskModes()[:1] { // the others are the campaign's
		t.Run(mode.name, func(t *testing.T) {
			h := coordinatortest.Start(t, coordinatortest.Options{Tweak: fastLeases})
			admin := h.Client(t, h.AdminToken)
			shared := sharedDir(t)
			a := startAgent(t, agentOpts{ID: "k0", Coordinators: []string{h.URL}, JoinToken: h.JoinToken,
				Root: rootDir(t), UIDBase: soloUIDBase, MaxTasks: 2, StopGrace: time.Second, TaskUser: mode.taskUser})
			credFile := filepath.Join(a.DataDir, agent.CredentialFile)
			var cred []byte
			coordinatortest.WaitFor(t, 30*time.Second, "the worker credential", func() bool {
				var err error
				cred, err = os.ReadFile(credFile)
				return err == nil
			})
			before, err := admin.Worker(t.Context(), "k0")
			if err != nil {
				t.Fatal(err)
			}

			// Long enough to outlive the lease and the restart: a
			// survivor would still hold the task's lock when it comes back.
			job, err := admin.SubmitJob(t.Context(), api.JobSpec{Executor: "exec", Config: execConfig(t, shared, "long", 4, 0),
				Resources: &api.Resources{GPUs: 2}, LeaseSeconds: 2, MaxAttempts: 3})
			if err != nil {
				t.Fatal(err)
			}
			waitStarted(t, shared, "long")
			tree := a.Kill()
			if len(running(tree)) == 0 {
				t.Fatalf("no task process below the agent before the kill: %v", tree)
			}
			if !poll(t.Context(), orphanDeadline, func() bool { return len(liveOf(tree)) == 0 }) {
				t.Fatalf("%v after the agent's SIGKILL these still run: %v", orphanDeadline, liveOf(tree))
			}

			a.start()
			tk := waitTaskEnded(t, admin, job.ID)
			if tk.State != api.TaskSucceeded || len(tk.Attempts) != 2 || tk.Attempts[0].State != api.AttemptLost {
				t.Errorf("task %s after %d attempts (%s), want succeeded on the second, the first lost: %+v", tk.State, len(tk.Attempts), tk.Reason, tk.Attempts)
			}
			if w := tk.Attempts[len(tk.Attempts)-1].WorkerID; w != "k0" {
				t.Errorf("the retry ran on %q, want the restarted k0", w)
			}
			if !strings.Contains(a.logs.String(), "resumed worker credential") {
				t.Errorf("the restarted agent did not resume its credential:\n%s", lastBytes(a.logs.String(), 3000))
			}
			if now, _ := os.ReadFile(credFile); string(now) != string(cred) {
				t.Error("the credential file changed across the restart")
			}
			after, err := admin.Worker(t.Context(), "k0")
			if err != nil || after.RegisteredAt != before.RegisteredAt {
				t.Errorf("worker k0 registered at %q before the restart, %q after (%v): it must be the same worker", before.RegisteredAt, after.RegisteredAt, err)
			}
			if ws, err := admin.Workers(t.Context()); err != nil || len(ws) != 1 {
				t.Errorf("workers after the restart: %d (%v), want the one", len(ws), err)
			}
			noOverlap(t, shared)
		})
	}
}

// A plugin process that dies (SIGKILL, the OOM killer) while its task
// runs fails the attempt with a reason naming the crash; every process of
// the task, one it started in the background included, is gone before the
// coordinator hears of the failure (it hands the task out again at once);
// the task succeeds on its next attempt, in a new plugin process.
func TestPluginCrashFailsTheAttempt(t *testing.T) {
	needTools(t)
	for _, mode := range taskModes() {
		t.Run(mode.name, func(t *testing.T) {
			h := coordinatortest.Start(t, coordinatortest.Options{Tweak: fastLeases})
			admin := h.Client(t, h.AdminToken)
			shared := sharedDir(t)
			a := startAgent(t, agentOpts{ID: "p0", Coordinators: []string{h.URL}, JoinToken: h.JoinToken,
				Root: rootDir(t), UIDBase: soloUIDBase, MaxTasks: 2, StopGrace: time.Second, TaskUser: mode.taskUser})
			job, err := admin.SubmitJob(t.Context(), api.JobSpec{Executor: "exec", Config: execConfig(t, shared, "crash", 3, 0),
				Resources: &api.Resources{GPUs: 1}, LeaseSeconds: 2, MaxAttempts: 3})
			if err != nil {
				t.Fatal(err)
			}
			first := waitStarted(t, shared, "crash")
			plugins := a.Plugins()
			if len(plugins) != 1 {
				t.Fatalf("plugin processes of the agent: %v, want one", plugins)
			}
			below := descendants(plugins[0].PID)
			if len(running(below)) == 0 {
				t.Fatalf("no task process below the plugin: %v", below)
			}
			a.Tree() // remembered, so that cleanup kills survivors
			killProc(plugins[0])

			// The moment the coordinator counts the attempt failed, none
			// of its processes may be left.
			var att api.Attempt
			coordinatortest.WaitFor(t, 30*time.Second, "the first attempt to end", func() bool {
				j, err := admin.Job(t.Context(), job.ID)
				if err != nil || len(j.Tasks[0].Attempts) == 0 {
					return false
				}
				att = j.Tasks[0].Attempts[0]
				return terminal(att.State) || att.State == api.AttemptLost
			})
			if left := liveOf(below); len(left) > 0 {
				t.Errorf("the coordinator counted the attempt over while its processes still ran: %v", left)
			}
			if att.AttemptID != first.Attempt || att.State != api.TaskFailed || !strings.Contains(att.Reason, `executor plugin "exec" exited unexpectedly`) {
				t.Errorf("first attempt %s: %s (%q), want failed naming the plugin's crash", att.AttemptID, att.State, att.Reason)
			}
			tk := waitTaskEnded(t, admin, job.ID)
			if tk.State != api.TaskSucceeded || len(tk.Attempts) != 2 {
				t.Errorf("task %s after %d attempts (%s), want succeeded on the second", tk.State, len(tk.Attempts), tk.Reason)
			}
			if now := a.Plugins(); len(now) != 1 || now[0].PID == plugins[0].PID {
				t.Errorf("plugin processes after the crash: %v, want a new one", now)
			}
			if !a.running() {
				t.Errorf("the agent died with its plugin:\n%s", lastBytes(a.logs.String(), 3000))
			}
			noOverlap(t, shared)
		})
	}
}
