package agent

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/gpulayer/gpulayer/agent/devices/health"
	"github.com/gpulayer/gpulayer/agent/devices/nvml"
	"github.com/gpulayer/gpulayer/agent/fabric"
	"github.com/gpulayer/gpulayer/agent/runner"
	"github.com/gpulayer/gpulayer/agent/spool"
	"github.com/gpulayer/gpulayer/internal/clock"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// Devices reports the GPUs of this node.
type Devices interface {
	Devices(ctx context.Context) ([]api.Device, error)
}

// Executors names the executors this node can run and hands them out.
type Executors interface {
	runner.Host
	Names() []string
}

// Config configures an agent.
type Config struct {
	// Coordinators are base URLs of any coordinators of the cluster.
	Coordinators []string
	CAFile       string
	// ClientCert and ClientKey are shown to coordinators that require
	// client certificates (mTLS).
	ClientCert string
	ClientKey  string
	// JoinToken registers the worker when no credential is persisted.
	JoinToken string
	// InstanceToken and InstanceID register a provisioned instance
	// (origin provider) instead of a join token: the token is single-use
	// and bound to that instance id.
	InstanceToken string
	InstanceID    string
	// Enroll, with ClusterKey and ExternalWorkerKey, registers through
	// the coordinators' allowlist instead: no token at all, the machine's
	// source address decides.
	Enroll            bool
	ClusterKey        string
	ExternalWorkerKey string
	// ApprovalPoll caps the wait between probes while the worker awaits
	// an admin's approval (default 15 s).
	ApprovalPoll time.Duration
	// AdminToken, when set, lets the agent repair its own identity at
	// start-up: a persisted credential the coordinator rejects (or one that
	// names another worker) is replaced through the admin reissue route.
	// It is used for nothing else and never logged.
	AdminToken string
	DataDir    string
	// WorkerID is the id to register under. When empty the agent asks
	// for its host's name (hostworkerid.go), and, should that be invalid
	// or taken, for an id the coordinator generates.
	WorkerID string
	// Hostname replaces os.Hostname as the name a worker id is made of
	// (tests).
	Hostname     string
	Labels       map[string]string
	Capabilities []string
	// MaxTasks bounds concurrent tasks (default: the GPU count, at least 4).
	MaxTasks int
	// AdvertiseAddr is the address this host's gang tasks are reached on
	// by their peers (MASTER_ADDR when one is rank 0); default: the local
	// address of the route to the first coordinator (advertise.go).
	AdvertiseAddr string
	// HeartbeatInterval until the coordinator says otherwise (default 2 s).
	HeartbeatInterval time.Duration
	// AcquireWait is the long-poll wait of each acquire (default 20 s).
	AcquireWait time.Duration
	// StopGrace is the time between the polite stop and the kill.
	StopGrace time.Duration

	// WorkDir is where each task's own directory is made (default: a
	// fresh directory under os.TempDir(), removed when Run returns). When
	// tasks run as other users, every directory above it must be
	// searchable by others; it cannot be inside DataDir (0700).
	WorkDir string
	// TaskUser, for an agent running as root, is the one user (name or
	// numeric uid) every task runs as. Empty: each task runs as its own
	// uid from TaskUIDBase (see planTaskUsers).
	TaskUser string
	// TaskUIDBase is the first uid (and gid) of the per-slot range,
	// TaskUIDBase … TaskUIDBase+MaxTasks-1; 0 means DefaultTaskUIDBase.
	TaskUIDBase uint32
	// HealthPolicy tunes how GPU faults take GPUs out of service and how
	// they come back (hold-down, flap quarantine, XID classes); HealthPoll
	// is how often GPUs are polled besides their events (default 10 s).
	// Both apply when the device source watches health (HealthWatcher).
	HealthPolicy health.Policy
	HealthPoll   time.Duration
	// HealthThresholds say when the polled inputs (ECC counters, retired
	// pages, a stuck GPU) make a GPU degraded or unhealthy; the zero
	// value takes the defaults (docs/gpus.md, "Health").
	HealthThresholds nvml.Thresholds
	// InventoryInterval is how often the GPU inventory is read again
	// (default DefaultInventoryInterval; negative: never).
	InventoryInterval time.Duration
	// GPUSampleInterval is how often GPU metrics are read, when the
	// device source reads them (GPUSampler; default 10 s).
	GPUSampleInterval time.Duration
	// MPSPipeDir is the pipe directory of the MPS control daemon that
	// serves this host's GPUs, if one does (nvidia-cuda-mps-control's
	// CUDA_MPS_PIPE_DIRECTORY, usually /tmp/nvidia-mps). When its control
	// pipe is there (looked for at each report and each task's start),
	// the agent reports its whole GPUs as enforcing memory shares through
	// MPS and holds each shared task to its share (docs/gpus.md,
	// "Fractional sharing"). Empty: no MPS. An agent running as root
	// needs TaskUser with it (ErrMPSNeedsOneTaskUser).
	MPSPipeDir string
	// NCCLHints are the NCCL variables the agent gives tasks that hold
	// GPUs, when enabled (agent/fabric, docs/gpus.md "NCCL hints");
	// FabricSysfs is where the host's RDMA adapters are listed (default
	// /sys/class/infiniband).
	NCCLHints   fabric.Hints
	FabricSysfs string
	// CDIDir is where the agent keeps its CDI spec of gpulayer.io/gpu
	// devices (cdispec.go, docs/containers.md); empty: it writes none,
	// and container tasks get no GPU.
	CDIDir string
	// TaskUIDSearch lets an agent whose per-slot range is held by another
	// agent on the host, or holds a uid or gid of the host, take the next
	// free range after it instead of failing (gpulayer dev, whose default
	// range another agent may hold); TaskUIDs says which it took.
	TaskUIDSearch bool
	// TaskUIDLockDir holds the locks by which an agent claims its task
	// uids on the host, so that two agents never share one (default
	// DefaultTaskUIDLockDir).
	TaskUIDLockDir string
	// AllowSharedUserTasks lets an agent that is not root run tasks as
	// its own user. Without it such an agent refuses to start
	// (ErrSharedUserTasks): its tasks could read its credential.
	AllowSharedUserTasks bool
	// TaskSandbox is what each task's sandbox hides and limits, beyond
	// what the agent hides of its own (taskSandbox): extra paths, the
	// memory, CPU and process limits, or no sandbox at all.
	TaskSandbox runner.SandboxConfig
	// ReportSpool bounds the spool that keeps attempts' reports until a
	// coordinator acknowledges them (reports.go); zero fields take
	// spool's defaults.
	ReportSpool spool.Limits
	// Metrics receives the agent's counters (NewMetrics when nil);
	// MetricsAddr, when set, serves them at GET /metrics, on a loopback
	// address unless MetricsAllowRemote (see checkMetricsAddr).
	Metrics            *Metrics
	MetricsAddr        string
	MetricsAllowRemote bool

	// MIGDrainBound is how long a MIG layout order waits for the tasks
	// on its GPU to end (DefaultMIGDrainBound when zero; miglayout.go).
	MIGDrainBound time.Duration

	Devices   Devices
	Executors Executors
	Clock     clock.Clock
	Logger    *slog.Logger
}

// Agent is one worker node.
type Agent struct {
	cfg    Config
	log    *slog.Logger
	client *client.Client
	plan   taskPlan
	runner *runner.Runner // built by Run, once the slots are known
	// shares is the watchdog of shared GPU tasks, built with the runner
	// (gpushare.go).
	shares *shareWatchdog
	leases *leaseBook
	// reports keeps and delivers attempts' reports (reports.go), built
	// with the runner.
	reports *reportQueue
	orders  *orders
	// migs are the MIG layout orders acted on (miglayout.go).
	migs migLayouts
	wake chan struct{} // a heartbeat now, please
	// identified is closed once the agent holds an accepted credential.
	identified chan struct{}
	// execs runs the exec sessions heartbeats offer (execsessions.go).
	execs *execSessions

	mu       sync.Mutex
	workerID string
	token    string     // the worker credential in use
	health   *gpuHealth // nil when the device source does not watch health
	// gpuSamples is the last GPU metrics sample (gpumetrics.go).
	gpuSamples []nvml.Sample
	// refused is set while the coordinator refuses the credential, so
	// that the agent says so once, not at every heartbeat.
	refused bool
	devices []api.Device
	// gpuNodes are the GPUs' device files by UUID, where the source says
	// (devicefence.go).
	gpuNodes map[string]string
	// cdiMu serialises the CDI spec's writes; cdiFailing says the last
	// one failed (logged once).
	cdiMu      sync.Mutex
	cdiFailing bool
	slots      int // tasks at once, fixed when Run starts
	// adapters are the host's RDMA adapters, read at New (fabric.go).
	adapters []fabric.Adapter
}

// New validates cfg and builds an agent.
func New(cfg Config) (*Agent, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("agent: data dir is required")
	}
	if cfg.Devices == nil || cfg.Executors == nil {
		return nil, errors.New("agent: devices and executors are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.HeartbeatInterval == 0 {
		cfg.HeartbeatInterval = 2 * time.Second
	}
	if cfg.AcquireWait == 0 {
		cfg.AcquireWait = 20 * time.Second
	}
	if cfg.InventoryInterval == 0 {
		cfg.InventoryInterval = DefaultInventoryInterval
	}
	if cfg.Capabilities == nil {
		cfg.Capabilities = []string{"*"}
	}
	if cfg.ApprovalPoll == 0 {
		cfg.ApprovalPoll = 15 * time.Second
	}
	if cfg.Enroll && (cfg.ClusterKey == "" || cfg.ExternalWorkerKey == "") {
		return nil, errors.New("agent: enrollment needs a cluster key and an external worker key")
	}
	if (cfg.InstanceToken == "") != (cfg.InstanceID == "") {
		return nil, errors.New("agent: an instance token goes with its instance id")
	}
	if err := checkMetricsAddr(cfg.MetricsAddr, cfg.MetricsAllowRemote); err != nil {
		return nil, err
	}
	if cfg.Metrics == nil {
		cfg.Metrics = NewMetrics()
	}
	plan, err := planTaskUsers(cfg, os.Geteuid())
	if err != nil {
		return nil, err
	}
	c, err := client.New(client.Config{Addrs: cfg.Coordinators, CAFile: cfg.CAFile, ClientCert: cfg.ClientCert, ClientKey: cfg.ClientKey})
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	a := &Agent{cfg: cfg, log: cfg.Logger.With("component", "agent"), client: c, plan: plan, leases: newLeaseBook(cfg.Clock), orders: newOrders(), wake: make(chan struct{}, 1), identified: make(chan struct{})}
	a.discoverFabric() // fabric.go
	a.execs = newExecSessions(a)
	return a, nil
}

// prepareTasks secures the data dir and builds the runner: the task users
// for maxTasks slots and the work root. The returned func removes a
// default work root.
func (a *Agent) prepareTasks() (func(), error) {
	if err := secureDataDir(a.cfg.DataDir); err != nil {
		return nil, err
	}
	slots := a.maxTasks()
	users, unclaim, err := a.taskUsers(slots) // taskuidsearch.go
	if err != nil {
		return nil, err
	}
	root, removeRoot, err := prepareWorkRoot(a.cfg.WorkDir, !a.plan.shared)
	if err != nil {
		unclaim()
		return nil, err
	}
	cleanup := func() { removeRoot(); unclaim() }
	a.reapContainers(root)
	if data, err := filepath.EvalSymlinks(a.cfg.DataDir); err == nil && isInside(root, data) {
		cleanup()
		return nil, fmt.Errorf("%w: the work dir %s is inside the data dir %s, which tasks must not reach", errUnsafeDir, root, data)
	}
	sp, err := spool.Open(filepath.Join(a.cfg.DataDir, ReportSpoolDir), a.cfg.ReportSpool, a.log)
	if err != nil {
		cleanup()
		return nil, fmt.Errorf("agent: %w", err)
	}
	if n, _ := sp.Len(); n > 0 {
		a.log.Info("reports of an earlier run wait in the spool; they go first", "reports", n)
	}
	a.reports = newReportQueue(sp, a.client, a.cfg.Clock, a.cfg.Logger.With("component", "reports"))
	a.runner = runner.New(runner.Config{
		Reports:      a.reports,
		MPS:          a.mpsNow,
		Host:         a.cfg.Executors,
		Coordinator:  a.client,
		Artifacts:    a.client,
		WorkRoot:     root,
		Users:        users,
		StopGrace:    a.cfg.StopGrace,
		Leases:       a.leases,
		Advertise:    advertiseAddr(context.Background(), a.cfg.AdvertiseAddr, a.cfg.Coordinators),
		Sandbox:      a.taskSandbox(),
		FenceDevices: a.fencedDevices,
		CDI:          a.cdiFor,
		Hints:        a.ncclHints,   // fabric.go
		Preflight:    a.preflight(), // preflight.go
		Clock:        a.cfg.Clock,
		Logger:       a.cfg.Logger.With("component", "runner"),
	})
	a.shares = &shareWatchdog{holder: a.runner, uidsOf: runner.ProcessUIDs, attemptOf: runner.AttemptOfPID, log: a.log, blind: map[string]bool{}}
	a.log.Info("task isolation", "users", a.plan.describe(slots), "work_dir", root, "gpu_sharing_mps", a.mpsNow() != "", "sandbox", sandboxSummary(a.taskSandbox()))
	return cleanup, nil
}

// isInside reports whether path is dir or below it.
func isInside(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && filepath.IsLocal(rel)
}

// WorkerID is the id the agent acts as, once known.
func (a *Agent) WorkerID() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.workerID
}

// Run registers or resumes, then heartbeats and runs tasks until ctx ends
// or the worker is revoked. Tasks still running when ctx ends are stopped.
func (a *Agent) Run(ctx context.Context) error {
	devs, err := a.cfg.Devices.Devices(ctx)
	if err != nil {
		return fmt.Errorf("agent: discover devices: %w", err)
	}
	a.devices = devs
	a.readDeviceNodes(ctx)
	a.slots = a.cfg.MaxTasks
	if a.slots <= 0 {
		a.slots = max(4, len(devs)) // fixed for the run: the task uids are claimed for it
	}
	a.log.Info("devices discovered", "gpus", len(devs), "executors", a.cfg.Executors.Names())
	cleanup, err := a.prepareTasks()
	if err != nil {
		return err
	}
	defer cleanup()
	if err := a.startHealth(); err != nil {
		return err
	}
	stopMetrics, err := a.startMetrics()
	if err != nil {
		return err
	}
	defer stopMetrics()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		a.watchHealth(ctx)
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		a.rereadInventory(ctx, a.cfg.InventoryInterval)
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		a.keepCDI(ctx)
	}()
	if s, ok := a.cfg.Devices.(GPUSampler); ok {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.sampleGPUs(ctx, s)
		}()
	}
	if err := a.identifyPatiently(ctx); err != nil {
		cancel(nil)
		wg.Wait()
		return err
	}
	a.resumeOwnDrain(ctx) // before a SIGTERM's drain may be asked for
	// Tasks may not reach the Raft port of a coordinator on this host
	// (raftguard_linux.go); the rules go when the agent stops.
	defer a.guardRaft(ctx)()
	close(a.identified)
	wg.Add(3)
	go func() {
		defer wg.Done()
		if err := a.heartbeatLoop(ctx); err != nil {
			cancel(err)
		}
	}()
	go func() {
		defer wg.Done()
		a.acquireLoop(ctx)
	}()
	go func() {
		defer wg.Done()
		a.reports.run(ctx)
	}()
	wg.Wait()
	a.migs.wg.Wait() // MIG layout orders stop with ctx (miglayout.go)
	// Every task has ended: what they reported (a task handed back at
	// shutdown above all) goes out now, within a bound; what does not
	// stays in the spool for the next start.
	fctx, stop := context.WithTimeout(context.WithoutCancel(ctx), shutdownFlush)
	a.reports.flush(fctx)
	stop()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, errFinished) {
		return err
	}
	return nil
}

func (a *Agent) heartbeatLoop(ctx context.Context) error {
	interval := a.cfg.HeartbeatInterval
	for {
		// The answer speaks of the attempts running when the heartbeat was
		// sent: a task named in cancel_task_ids is stopped in those only,
		// never in an attempt of it assigned while the heartbeat was out.
		running := a.runner.Running()
		sent, began := a.cfg.Clock.Now(), time.Now()
		resp, err := a.client.Heartbeat(ctx, api.HeartbeatRequest{
			RunningTaskIDs: heldTaskIDs(running, a.reports.taskIDs()),
			Devices:        a.deviceView(),
			Executors:      a.cfg.Executors.Names(),
			MaxTasks:       a.maxTasks(),
		})
		a.cfg.Metrics.heartbeatDone(ctx, time.Since(began), err)
		switch {
		case err == nil:
			a.credentialAccepted()
			a.heard(resp.Command)
			a.clearGPUs(resp.ClearGPUs)
			a.migOrders(ctx, resp.MIGLayouts)
			a.execs.offer(ctx, resp.ExecSessions)
			var renewed, all []string
			for _, at := range running {
				all = append(all, at.AttemptID)
				if !slices.Contains(resp.CancelTaskIDs, at.TaskID) {
					renewed = append(renewed, at.AttemptID)
				} else if slices.Contains(resp.PreemptTaskIDs, at.TaskID) && a.runner.Preempt(at.AttemptID) {
					a.log.Info("coordinator preempted task", "task_id", at.TaskID, "attempt_id", at.AttemptID)
				} else if a.runner.Cancel(at.AttemptID) {
					a.log.Info("coordinator asked to stop task", "task_id", at.TaskID, "attempt_id", at.AttemptID)
				}
			}
			a.leases.renewed(renewed, all, sent)
			if resp.IntervalSeconds > 0 {
				interval = time.Duration(resp.IntervalSeconds * float64(time.Second))
			}
			if a.orders.exitWhenIdle() && len(running) == 0 && len(a.runner.Running()) == 0 {
				a.log.Info("worker holds no task; the agent exits", "command", resp.Command)
				return errFinished
			}
		case client.IsCode(err, api.CodeWorkerPending):
			a.log.Debug("heartbeat: worker awaits approval")
		case client.IsCode(err, api.CodeUnauthenticated) && a.orders.forgotten():
			a.log.Info("worker deregistered: the coordinator has forgotten it; the agent exits")
			return errFinished
		case client.IsCode(err, api.CodeUnauthenticated):
			a.credentialRefused(ctx)
		case client.IsCode(err, api.CodeWorkerRevoked):
			a.log.Error("worker revoked; stopping every task")
			for _, at := range a.runner.Running() {
				a.runner.Cancel(at.AttemptID)
			}
			return ErrRevoked
		case ctx.Err() != nil:
			return nil
		default:
			a.log.Warn("heartbeat failed", "error", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-a.cfg.Clock.After(interval):
		case <-a.leases.nudge: // a task waits for its lease to be renewed
		case <-a.wake:
		}
	}
}

// heldTaskIDs lists the tasks the worker holds, each once: those of
// running attempts and those whose reports wait in the spool (their leases
// must hold until the report lands).
func heldTaskIDs(running []runner.Attempt, reported []string) []string {
	ids := append(taskIDs(running), reported...)
	slices.Sort(ids)
	return slices.Compact(ids)
}

// taskIDs lists the tasks of running attempts, each once.
func taskIDs(running []runner.Attempt) []string {
	ids := make([]string, 0, len(running))
	for _, at := range running {
		if len(ids) == 0 || ids[len(ids)-1] != at.TaskID { // sorted by task
			ids = append(ids, at.TaskID)
		}
	}
	return ids
}

// maxTasks is how many tasks the agent runs at once, set when Run
// starts.
func (a *Agent) maxTasks() int { return a.slots }

func (a *Agent) acquireLoop(ctx context.Context) {
	slots := make(chan struct{}, a.maxTasks())
	var wg sync.WaitGroup
	defer wg.Wait()
	backoff := 100 * time.Millisecond
	// requestID is kept until a call is answered, so that an acquire whose
	// answer was lost (the client gave up retrying) is asked again under
	// its id and gets the tasks it was given, not more; asked is how many
	// slots that call held, and its retry holds as many.
	requestID := ""
	asked := 0
	var sent time.Time // when the acquire under requestID was first sent
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		// Reports of attempts that ended go before new work: after an
		// outage, the coordinator hears what was done before it hands
		// out more (reports.go).
		if err := a.reports.waitReady(ctx); err != nil {
			return
		}
		if command, changed := a.orders.current(); command != api.CommandNone {
			// Draining or stopping: no acquire until a heartbeat says
			// the worker is ready again.
			<-slots
			select {
			case <-changed:
			case <-ctx.Done():
				return
			}
			continue
		}
		held := 1
		if requestID == "" {
			// Every free slot, in one call.
			held += takeFree(slots, api.MaxAcquireTasks-1)
			requestID, asked, sent = rand.Text(), held, a.cfg.Clock.Now()
		} else {
			for ; held < asked; held++ {
				select {
				case slots <- struct{}{}:
				case <-ctx.Done():
					return
				}
			}
		}
		release := func(n int) {
			for range n {
				<-slots
			}
		}
		resp, err := a.client.Acquire(ctx, api.AcquireRequest{WaitSeconds: int(a.cfg.AcquireWait / time.Second), RequestID: requestID, MaxTasks: held})
		if err == nil {
			requestID = ""
			if resp.Task == nil && resp.Command != "" {
				a.heard(resp.Command)
			}
		}
		tasks := resp.Tasks
		if len(tasks) == 0 && resp.Task != nil {
			tasks = []api.Assignment{*resp.Task}
		}
		if err != nil || len(tasks) == 0 {
			release(held)
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				a.log.Warn("acquire failed", "error", err)
				a.cfg.Metrics.acquireFailed()
				select {
				case <-ctx.Done():
					return
				case <-a.cfg.Clock.After(backoff):
				}
				backoff = min(2*backoff, 5*time.Second)
			}
			continue
		}
		backoff = 100 * time.Millisecond
		if len(tasks) > held {
			// A coordinator that hands out more than asked: run what the
			// slots allow; the rest lapse and go to other workers.
			a.log.Warn("acquire answered more tasks than asked", "asked", held, "got", len(tasks))
			tasks = tasks[:held]
		}
		release(held - len(tasks))
		for _, task := range tasks {
			if task.LeaseSeconds > 0 {
				a.leases.assigned(task.AttemptID, time.Duration(task.LeaseSeconds)*time.Second, sent)
			}
			a.log.Info("task assigned", "task_id", task.ID, "attempt_id", task.AttemptID, "devices", task.Devices)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-slots }()
				began := time.Now()
				out := a.runner.Run(ctx, task)
				if out.End != runner.EndDuplicate {
					a.cfg.Metrics.taskFinished(out.End, time.Since(began))
				}
			}()
		}
	}
}

// takeFree takes up to n more slots that are free now, without waiting,
// and says how many it took.
func takeFree(slots chan struct{}, n int) int {
	took := 0
	for took < n {
		select {
		case slots <- struct{}{}:
			took++
		default:
			return took
		}
	}
	return took
}

// ReportSpoolDir is the report spool's directory in the data dir.
const ReportSpoolDir = "reports"

// shutdownFlush bounds how long a stopping agent tries to deliver the
// reports still waiting.
const shutdownFlush = 5 * time.Second

// CredentialPath is where the agent keeps its worker credential.
func CredentialPath(dataDir string) string { return filepath.Join(dataDir, CredentialFile) }
