package integration

import (
	"cmp"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/agent"
	"github.com/gpulayer/gpulayer/agent/devices"
	"github.com/gpulayer/gpulayer/agent/fabric"
	"github.com/gpulayer/gpulayer/agent/pluginhost"
	"github.com/gpulayer/gpulayer/agent/runner"
	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

type runningAgent struct {
	agent   *agent.Agent
	ctx     context.Context
	once    sync.Once
	stopFn  func(wait bool) error
	started bool
	cancel  context.CancelFunc
	done    chan error
	gpus    []api.Device
	dataDir string
}

// agentOpts are the knobs the tests turn on an agent.
type agentOpts struct {
	pluginDir  string
	dataDir    string
	adminToken string

	instanceToken, instanceID     string
	enroll                        bool
	clusterKey, externalWorkerKey string

	// source, when set, replaces the fake GPU set (a test fixture's
	// NVML, watched for health); healthPoll is how often it is polled.
	source     devices.Source
	healthPoll time.Duration
	// inventoryInterval is how often the agent reads its GPUs again
	// (0: the agent's default).
	inventoryInterval time.Duration
	// gpuSampleInterval is how often the agent samples its GPUs, when
	// the source samples them (0: the agent's default).
	gpuSampleInterval time.Duration
	// mpsPipeDir is the agent's --mps-pipe-dir; taskUser its --task-user
	// (honoured as root).
	mpsPipeDir string
	taskUser   string
	// containers probes the built-in executors (the container executor
	// where Docker answers) and keeps the CDI spec in cdiDir.
	containers bool
	// migDrainBound is the agent's MIG drain bound (0: its default).
	migDrainBound time.Duration
	cdiDir        string
	// hostname replaces the host's name the agent makes its id of when
	// given none.
	hostname string
	// isolateNetwork is the agent's --task-network isolated.
	isolateNetwork bool
	// nccl are the agent's NCCL hints; fabricSysfs where it lists the
	// host's RDMA adapters (empty: a directory that does not exist, so
	// the host's own adapters never reach a test).
	nccl        fabric.Hints
	fabricSysfs string
	// caFile verifies coordinators that serve HTTPS.
	caFile string
}

// taskUserAsRoot is user for an agent running as root; an agent that is
// not runs tasks as its own user and takes none.
func taskUserAsRoot(user string) string {
	if os.Geteuid() != 0 {
		return ""
	}
	return user
}

func startAgent(t *testing.T, coordinatorURL, joinToken, workerID, fake string, opts ...agentOpts) *runningAgent {
	t.Helper()
	ra := newAgent(t, coordinatorURL, joinToken, workerID, fake, opts...)
	ra.started = true
	go func() { ra.done <- ra.agent.Run(ra.ctx) }()
	return ra
}

// newAgent builds an agent without running it.
func newAgent(t *testing.T, coordinatorURL, joinToken, workerID, fake string, opts ...agentOpts) *runningAgent {
	t.Helper()
	var o agentOpts
	if len(opts) > 0 {
		o = opts[0]
	}
	log := coordinatortest.TestLogger(t).With("agent", workerID)
	dataDir := o.dataDir
	if dataDir == "" {
		dataDir = filepath.Join(t.TempDir(), workerID)
	}
	ctx, cancel := context.WithCancel(context.Background())
	src := o.source
	if src == nil {
		var err error
		if src, err = devices.OpenSeeded(ctx, log, fake, dataDir); err != nil {
			t.Fatal(err)
		}
	}
	gpus, err := src.Devices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	host, err := pluginhost.New(pluginhost.Config{
		Logger:        log,
		SelfExe:       os.Args[0],
		SelfArgs:      func(name string) []string { return []string{pluginArg, name} },
		PluginDir:     o.pluginDir,
		ProbeBuiltins: o.containers,
	})
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Config{
		Coordinators:      []string{coordinatorURL},
		CAFile:            o.caFile,
		JoinToken:         joinToken,
		AdminToken:        o.adminToken,
		InstanceToken:     o.instanceToken,
		InstanceID:        o.instanceID,
		Enroll:            o.enroll,
		ClusterKey:        o.clusterKey,
		ExternalWorkerKey: o.externalWorkerKey,
		ApprovalPoll:      300 * time.Millisecond,
		DataDir:           dataDir,
		WorkerID:          workerID,
		Hostname:          o.hostname,
		HeartbeatInterval: 100 * time.Millisecond,
		AcquireWait:       2 * time.Second,
		StopGrace:         2 * time.Second,
		Devices:           src,
		Executors:         host,
		Logger:            log,
		// As root tasks get uids of their own; otherwise accept shared.
		AllowSharedUserTasks: os.Geteuid() != 0,
		TaskUIDBase:          nextTaskUIDBase(),
		HealthPoll:           o.healthPoll,
		InventoryInterval:    o.inventoryInterval,
		GPUSampleInterval:    o.gpuSampleInterval,
		MPSPipeDir:           o.mpsPipeDir,
		CDIDir:               o.cdiDir,
		MIGDrainBound:        o.migDrainBound,
		TaskUser:             taskUserAsRoot(o.taskUser),
		TaskSandbox:          runner.SandboxConfig{Keep: []string{taskShareRoot(t)}, IsolateNetwork: o.isolateNetwork},
		NCCLHints:            o.nccl,
		FabricSysfs:          cmp.Or(o.fabricSysfs, filepath.Join(dataDir, "no-sysfs")),
	})
	if err != nil {
		t.Fatal(err)
	}
	ra := &runningAgent{agent: a, ctx: ctx, cancel: cancel, done: make(chan error, 1), gpus: gpus, dataDir: dataDir}
	ra.stopFn = func(wait bool) error {
		var err error
		ra.once.Do(func() {
			cancel()
			if wait && ra.started {
				err = <-ra.done
			}
			host.Close()
			src.Close()
		})
		return err
	}
	t.Cleanup(func() { ra.stopFn(true) })
	return ra
}

func startCoordinator(t *testing.T) *coordinatortest.Harness {
	return coordinatortest.Start(t, coordinatortest.Options{Tweak: func(c *coordinator.Config) {
		c.HeartbeatInterval = 100 * time.Millisecond
	}})
}

func waitJob(t *testing.T, c *client.Client, id string, cond func(api.Job) bool, what string) api.Job {
	t.Helper()
	var last api.Job
	coordinatortest.WaitFor(t, 30*time.Second, what, func() bool {
		j, err := c.Job(context.Background(), id)
		if err != nil {
			t.Fatalf("read job: %v", err)
		}
		last = j
		return cond(j)
	})
	return last
}

func terminal(j api.Job) bool {
	switch j.State {
	case api.TaskSucceeded, api.TaskFailed, api.TaskCancelled:
		return true
	}
	return false
}

func execSpec(script string, gpus int) api.JobSpec {
	cfg := `{"command":"sh","args":["-c",` + quote(script) + `]}`
	spec := api.JobSpec{Executor: "exec", Config: []byte(cfg)}
	if gpus > 0 {
		spec.Resources = &api.Resources{GPUs: gpus}
	}
	return spec
}

func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

func logsOf(t *testing.T, c *client.Client, id string) string {
	t.Helper()
	var b strings.Builder
	if err := c.Logs(context.Background(), id, false, func(e api.LogEntry) error { b.WriteString(e.Data); return nil }); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestEndToEnd(t *testing.T) {
	h := startCoordinator(t)
	admin := h.Client(t, h.AdminToken)
	ag := startAgent(t, h.URL, h.JoinToken, "node-a", "dgxh100")
	ctx := t.Context()

	t.Run("succeeds with exactly its GPUs", func(t *testing.T) {
		job, err := admin.SubmitJob(ctx, execSpec(`echo "gpus=$CUDA_VISIBLE_DEVICES"; echo to-stderr >&2`, 2))
		if err != nil {
			t.Fatal(err)
		}
		j := waitJob(t, admin, job.ID, terminal, "job to end")
		task := j.Tasks[0]
		if j.State != api.TaskSucceeded || task.ExitCode == nil || *task.ExitCode != 0 {
			t.Fatalf("job ended %s: %+v", j.State, task)
		}
		if task.ExecutedBy != "node-a" || task.SubmittedBy != "node-a" || j.CreatedBy != "admin" {
			t.Fatalf("attribution: created_by=%s executed_by=%s submitted_by=%s", j.CreatedBy, task.ExecutedBy, task.SubmittedBy)
		}
		out := logsOf(t, admin, job.ID)
		line := strings.TrimSpace(strings.SplitN(strings.SplitN(out, "gpus=", 2)[1], "\n", 2)[0])
		seen := strings.Split(line, ",")
		if len(seen) != 2 || seen[0] == seen[1] {
			t.Fatalf("task saw CUDA_VISIBLE_DEVICES=%q, want two distinct UUIDs", line)
		}
		var inventory []string
		for _, d := range ag.gpus {
			inventory = append(inventory, d.UUID)
		}
		for _, u := range seen {
			if !slices.Contains(inventory, u) {
				t.Fatalf("task saw %s, not one of the agent's GPUs", u)
			}
		}
		if !slices.Equal(task.Attempts[0].Devices, seen) {
			t.Fatalf("recorded devices %v, task saw %v", task.Attempts[0].Devices, seen)
		}
		if !strings.Contains(out, "to-stderr") {
			t.Fatalf("stderr missing from logs: %q", out)
		}
	})

	t.Run("fails with its exit code", func(t *testing.T) {
		job, err := admin.SubmitJob(ctx, execSpec(`echo boom >&2; exit 3`, 0))
		if err != nil {
			t.Fatal(err)
		}
		j := waitJob(t, admin, job.ID, terminal, "job to end")
		if j.State != api.TaskFailed || *j.Tasks[0].ExitCode != 3 || len(j.Tasks[0].Attempts) != 1 {
			t.Fatalf("job: %s %+v", j.State, j.Tasks[0])
		}
	})

	t.Run("cancelled while running", func(t *testing.T) {
		job, err := admin.SubmitJob(ctx, execSpec(`echo started; exec sleep 120`, 1))
		if err != nil {
			t.Fatal(err)
		}
		waitJob(t, admin, job.ID, func(j api.Job) bool { return strings.Contains(logsOf(t, admin, job.ID), "started") }, "task to start")
		if _, err := admin.CancelJob(ctx, job.ID); err != nil {
			t.Fatal(err)
		}
		j := waitJob(t, admin, job.ID, terminal, "job to end after cancel")
		if j.State != api.TaskCancelled {
			t.Fatalf("job ended %s", j.State)
		}
	})

	t.Run("timeout stops the task", func(t *testing.T) {
		spec := execSpec(`exec sleep 120`, 0)
		spec.TimeoutSeconds = 1
		job, err := admin.SubmitJob(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		j := waitJob(t, admin, job.ID, terminal, "job to time out")
		if j.State != api.TaskFailed || j.Tasks[0].ExitCode == nil || *j.Tasks[0].ExitCode == 0 {
			t.Fatalf("job: %s %+v", j.State, j.Tasks[0])
		}
		if !strings.Contains(logsOf(t, admin, job.ID), "timed out after 1s") {
			t.Fatalf("timeout not explained in the logs")
		}
	})

	t.Run("unknown executor is never handed out", func(t *testing.T) {
		job, err := admin.SubmitJob(ctx, api.JobSpec{Executor: "nosuch", Config: []byte(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		probe, err := admin.SubmitJob(ctx, execSpec(`true`, 0))
		if err != nil {
			t.Fatal(err)
		}
		waitJob(t, admin, probe.ID, terminal, "a later job to run")
		j, _ := admin.Job(ctx, job.ID)
		if j.State != api.TaskPending {
			t.Fatalf("job for a missing executor is %s", j.State)
		}
	})
}

func TestLapsedLeaseIsRetriedElsewhere(t *testing.T) {
	h := startCoordinator(t)
	admin := h.Client(t, h.AdminToken)
	ctx := t.Context()
	proxy := newCutProxy(t, h.URL)
	doomed := startAgent(t, proxy.srv.URL, h.JoinToken, "doomed", "dgxh100")

	spec := execSpec(`echo "attempt $GPULAYER_ATTEMPT_ID"; sleep 3; echo done`, 1)
	spec.LeaseSeconds = 1
	job, err := admin.SubmitJob(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	waitJob(t, admin, job.ID, func(j api.Job) bool { return j.Tasks[0].State == api.TaskRunning }, "task to run on the doomed agent")
	first := waitJob(t, admin, job.ID, func(j api.Job) bool { return true }, "job read")
	proxy.cut.Store(true) // the agent is gone as far as the coordinator can tell

	startAgent(t, h.URL, h.JoinToken, "rescuer", "dgxa100")
	j := waitJob(t, admin, job.ID, terminal, "job to finish on the rescuer")
	task := j.Tasks[0]
	if j.State != api.TaskSucceeded || task.ExecutedBy != "rescuer" || len(task.Attempts) < 2 {
		t.Fatalf("job %s: %+v", j.State, task)
	}
	if a := task.Attempts[0]; a.WorkerID != "doomed" || a.State != api.AttemptLost || a.AttemptID != first.Tasks[0].AttemptID {
		t.Fatalf("first attempt: %+v", a)
	}
	// A long poll the doomed agent had in flight when it was cut off may
	// have been answered with the task again; such attempts lapse too.
	for _, a := range task.Attempts[1 : len(task.Attempts)-1] {
		if a.WorkerID != "doomed" || a.State != api.AttemptLost {
			t.Fatalf("middle attempt: %+v", a)
		}
	}
	if last := task.Attempts[len(task.Attempts)-1]; last.WorkerID != "rescuer" || last.State != api.TaskSucceeded {
		t.Fatalf("last attempt: %+v", last)
	}

	// The doomed agent's late finish is fenced off.
	proxy.cut.Store(false)
	w, err := client.New(client.Config{Addrs: []string{h.URL}, Token: credentialOf(t, doomed)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.Finish(ctx, task.ID, api.FinishRequest{AttemptID: first.Tasks[0].AttemptID, ExitCode: 0})
	if !client.IsCode(err, api.CodeStaleAttempt) {
		t.Fatalf("late finish: %v, want stale_attempt", err)
	}
}

// credentialOf reads the worker token an agent persisted.
func credentialOf(t *testing.T, ra *runningAgent) string {
	t.Helper()
	b, err := os.ReadFile(agent.CredentialPath(ra.dataDir))
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		WorkerToken string `json:"worker_token"`
	}
	if err := json.Unmarshal(b, &tok); err != nil {
		t.Fatal(err)
	}
	return tok.WorkerToken
}
