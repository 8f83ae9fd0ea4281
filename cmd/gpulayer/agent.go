package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gpulayer/gpulayer/agent"
	"github.com/gpulayer/gpulayer/agent/devices"
	"github.com/gpulayer/gpulayer/agent/pluginhost"
	"github.com/gpulayer/gpulayer/agent/runner"
	"github.com/gpulayer/gpulayer/agent/spool"
	"github.com/gpulayer/gpulayer/sdk/executor"
)

type agentFlags struct {
	health       healthFlags
	nccl         ncclFlags
	coordinators string
	joinToken    string
	adminToken   string
	dataDir      string
	workerID     string
	fakeGPUs     string
	cdiDir       string
	fakeFaults   string
	pluginDir    string
	caFile       string
	clientCert   string
	clientKey    string
	capabilities string
	labels       []string

	instanceToken     string
	instanceID        string
	enroll            bool
	clusterKey        string
	externalWorkerKey string
	maxTasks          int
	advertiseAddr     string
	inventoryInterval time.Duration
	migDrainBound     time.Duration
	stopGrace         time.Duration
	mpsPipeDir        string
	drainDeadline     time.Duration
	leaveOnTerminate  bool

	workDir          string
	taskUser         string
	taskUIDBase      uint
	taskUIDLockDir   string
	taskUIDSearch    bool // dev: pass over a range held or used on the host
	allowSharedTasks bool
	pluginPins       pinFlag

	metricsAddr        string
	metricsAllowRemote bool

	// The task sandbox (docs/agent.md, "Task sandbox").
	noSandbox   bool
	taskMemory  int64
	taskCPUs    float64
	taskPids    int64
	taskNetwork string
	sandboxHide string
	sandboxKeep string
	configFile  string // --config, hidden from tasks besides

	// The report spool (docs/reliability.md, "Reports outlive outages").
	spoolRecords int
	spoolMiB     int64
}

func (f *agentFlags) register(fs *pflag.FlagSet) {
	f.health.register(fs)
	f.nccl.register(fs) // agent_nccl.go
	fs.StringVar(&f.coordinators, "coordinator", "", "coordinator URL(s), comma separated")
	fs.StringVar(&f.joinToken, "join-token", "", "join token to register with, first start only (as root, only from the environment)")
	// Secrets: as root, only from the environment (refuseSecretsOnArgv).
	fs.StringVar(&f.adminToken, "admin-token", "", "admin client token used only to reissue this worker's credential when the persisted one is rejected")
	fs.StringVar(&f.dataDir, "data-dir", "", "agent data directory (required)")
	fs.StringVar(&f.workerID, "worker-id", "", "worker id to register as (default: the host's name, lowercased and cut at the first dot, when valid and free; else generated)")
	fs.StringVar(&f.fakeGPUs, "fake-gpus", "", "use fake GPUs: none, "+strings.Join(devices.FakeNames(), ", "))
	fs.StringVar(&f.fakeFaults, "fake-gpu-faults", "", "with --fake-gpus: a FILE whose appended lines, \"<uuid> xid <n>\", \"<uuid> lost\", \"<uuid> throttle hw-thermal|none\" or \"<uuid> retire-pending on|off\", are delivered as faults or conditions of those fake GPUs (created if absent; docs/gpus.md)")
	fs.StringVar(&f.pluginDir, "plugin-dir", "", "directory of gpulayer-executor-<name> plugin binaries")
	fs.StringVar(&f.caFile, "ca-file", "", "PEM bundle to trust for HTTPS")
	fs.StringVar(&f.clientCert, "client-cert", "", "client certificate (PEM) for coordinators that require one")
	fs.StringVar(&f.clientKey, "client-key", "", "key of --client-cert (PEM)")
	// No env default for the instance token either: it is a secret.
	fs.StringVar(&f.instanceToken, "instance-token", "", "single-use instance token (gli_…) to register a provisioned instance with origin provider")
	fs.StringVar(&f.instanceID, "instance-id", "", "the instance id the instance token is bound to")
	fs.BoolVar(&f.enroll, "enroll", false, "enroll through the coordinators' allowlist (no token): needs --cluster-key and --external-worker-key")
	fs.StringVar(&f.clusterKey, "cluster-key", "", "enrollment cluster key (with --enroll)")
	fs.StringVar(&f.externalWorkerKey, "external-worker-key", "", "this machine's allowlist key (with --enroll)")
	fs.StringVar(&f.capabilities, "capabilities", "*", "capabilities to advertise, comma separated (* takes any task)")
	fs.StringArrayVar(&f.labels, "label", nil, "KEY=VALUE label the worker registers with (affinity rules read them; gpulayer.io/rack, gpulayer.io/switch and gpulayer.io/nvlink-domain place gangs near each other); repeatable")
	fs.IntVar(&f.maxTasks, "max-tasks", 0, "concurrent tasks (default: GPU count, at least 4)")
	fs.DurationVar(&f.migDrainBound, "mig-drain-bound", agent.DefaultMIGDrainBound, "how long a MIG repartition an admin asked for waits for the tasks on its GPU to end before it is given up (reported failed)")
	fs.DurationVar(&f.inventoryInterval, "inventory-interval", agent.DefaultInventoryInterval, "how often to read the GPU inventory again (a GPU that appears or changes is offered once an admin approves it); 0: never")
	fs.StringVar(&f.advertiseAddr, "advertise-addr", "", "IP or host name this node's gang tasks are reached on by their peers (MASTER_ADDR); default: this host's address on the route to the coordinator")
	fs.DurationVar(&f.stopGrace, "stop-grace", 10*time.Second, "time between the polite stop and the kill")
	fs.StringVar(&f.cdiDir, "cdi-dir", "", "directory where the agent keeps its CDI spec of gpulayer.io/gpu devices, for the container executor and other CDI consumers (docs/containers.md); default /var/run/cdi, or DATA-DIR/cdi with --fake-gpus; \"none\" writes none")
	fs.StringVar(&f.mpsPipeDir, "mps-pipe-dir", "", "pipe directory of the MPS control daemon serving this host's GPUs (its CUDA_MPS_PIPE_DIRECTORY, usually /tmp/nvidia-mps): shared GPU tasks are then held to their memory share by MPS. As root it needs --task-user: MPS serves one uid at a time (docs/gpus.md, \"Fractional sharing\")")
	fs.DurationVar(&f.drainDeadline, "drain-deadline", time.Minute, "at SIGTERM the agent drains its worker: running tasks get this long to end before they are stopped and handed back (a second SIGTERM, or SIGINT, stops at once)")
	fs.BoolVar(&f.leaveOnTerminate, "leave-on-terminate", false, "at SIGTERM deregister the worker instead of draining it: the coordinator forgets it once idle, and its credential stops working")
	fs.StringVar(&f.workDir, "work-dir", "", "where task directories are made (default: a fresh directory under $TMPDIR, removed at exit); not inside --data-dir")
	fs.StringVar(&f.taskUser, "task-user", "", "run every task as this user (name or uid; needs root). Default as root: one uid per task slot from --task-uid-base")
	fs.UintVar(&f.taskUIDBase, "task-uid-base", agent.DefaultTaskUIDBase, "as root without --task-user: task slot i runs as uid and gid base+i; the range must be unused on this host")
	fs.StringVar(&f.taskUIDLockDir, "task-uid-lock-dir", agent.DefaultTaskUIDLockDir, "where agents on this host lock their task uid ranges, so that no two share a uid")
	fs.BoolVar(&f.allowSharedTasks, "allow-shared-user-tasks", false, "let an agent that is not root run tasks as its own user (they can then read its credential); refused otherwise")
	fs.Var(&f.pluginPins, "plugin-sha256", "pin a plugin-directory executor to the SHA-256 of its file, name=hex (repeatable; see also plugins.sha256)")
	fs.StringVar(&f.metricsAddr, "metrics-addr", "", "serve Prometheus metrics at GET /metrics on this HOST:PORT, loopback unless --metrics-allow-remote (default: not served)")
	fs.BoolVar(&f.metricsAllowRemote, "metrics-allow-remote", false, "let --metrics-addr be a non-loopback address (the endpoint has no TLS or authentication)")
	fs.BoolVar(&f.noSandbox, "no-task-sandbox", false, "run tasks without their sandbox (own PID and mount namespaces, private /tmp and /dev/shm, hidden agent files, a cgroup): tasks then see the host's /tmp and processes")
	fs.Int64Var(&f.taskMemory, "task-memory-mib", 0, "cap each task's memory (its cgroup) at this many MiB; 0: no cap")
	fs.Float64Var(&f.taskCPUs, "task-cpus", 0, "cap each task's CPU time (its cgroup) at this many CPUs, fractions allowed; 0: no cap")
	fs.Int64Var(&f.taskPids, "task-pids", 0, "cap each task's processes and threads; 0: the default (4096), negative: no cap")
	fs.StringVar(&f.taskNetwork, "task-network", executor.SandboxNetworkHost, "the network of a sandboxed task: host (the host's network: every local port and abstract Unix socket is reachable) or isolated (a network namespace of its own with only loopback: no local port, no abstract socket, no way out); gang members always get host, which NCCL needs (docs/security.md)")
	fs.StringVar(&f.sandboxHide, "task-sandbox-hide", "", "more host paths no task may see, comma separated (the data dir, the config file's directory, /etc/gpulayer, the work root and the task uid locks always are)")
	fs.IntVar(&f.spoolRecords, "report-spool-max-records", spool.DefaultMaxRecords, "attempt reports kept on disk until a coordinator takes them; at this many the agent takes no new task until they are delivered (none is ever dropped)")
	fs.Int64Var(&f.spoolMiB, "report-spool-max-mib", spool.DefaultMaxBytes>>20, "the same bound in MiB of reports")
	fs.StringVar(&f.sandboxKeep, "task-sandbox-keep", "", "host paths every task still reaches where its private /tmp or a hidden path covers them (a shared dataset under /tmp, say), comma separated")
}

// taskSandbox turns the sandbox flags into the agent's request.
func (f agentFlags) taskSandbox() (runner.SandboxConfig, error) {
	if f.taskMemory < 0 || f.taskMemory > math.MaxInt64>>20 {
		return runner.SandboxConfig{}, usagef("--task-memory-mib %d is not a size", f.taskMemory)
	}
	if f.taskCPUs < 0 || math.IsNaN(f.taskCPUs) || f.taskCPUs > 1<<20 {
		return runner.SandboxConfig{}, usagef("--task-cpus %v is not a CPU count", f.taskCPUs)
	}
	var isolate bool
	switch f.taskNetwork {
	case "", executor.SandboxNetworkHost:
	case executor.SandboxNetworkIsolated:
		if f.noSandbox {
			return runner.SandboxConfig{}, usagef("--task-network isolated needs the task sandbox, which --no-task-sandbox turns off")
		}
		isolate = true
	default:
		return runner.SandboxConfig{}, usagef("--task-network is %q or %q, not %q", executor.SandboxNetworkHost, executor.SandboxNetworkIsolated, f.taskNetwork)
	}
	sb := runner.SandboxConfig{
		IsolateNetwork: isolate,
		Disable:        f.noSandbox,
		Hide:           splitList(f.sandboxHide),
		Keep:           splitList(f.sandboxKeep),
		MemoryBytes:    f.taskMemory << 20,
		CPUMillis:      int64(math.Ceil(f.taskCPUs * 1000)),
		Pids:           f.taskPids,
	}
	for _, p := range slices.Concat(sb.Hide, sb.Keep) {
		if !filepath.IsAbs(p) {
			return runner.SandboxConfig{}, usagef("--task-sandbox-hide and --task-sandbox-keep take absolute paths, not %q", p)
		}
	}
	if f.configFile != "" {
		abs, err := filepath.Abs(f.configFile)
		if err != nil {
			return runner.SandboxConfig{}, err
		}
		sb.Hide = append(sb.Hide, filepath.Dir(abs))
	}
	return sb, nil
}

// pinFlag collects --plugin-sha256 name=hex values.
type pinFlag map[string]string

func (p *pinFlag) String() string { return fmt.Sprint(map[string]string(*p)) }
func (p *pinFlag) Type() string   { return "name=sha256" }

func (p *pinFlag) Set(s string) error {
	name, sum, err := pluginhost.ParsePin(s)
	if err != nil {
		return err
	}
	if *p == nil {
		*p = pinFlag{}
	}
	if prev, ok := (*p)[name]; ok && prev != sum {
		return fmt.Errorf("%s is pinned twice, to different hashes", name)
	}
	(*p)[name] = sum
	return nil
}

// scrubAgentEnv removes every GPULAYER_* variable from the agent's own
// environment once the flags have been read: whatever the agent launches
// (plugin processes, and through them tasks) can then not inherit a
// token, even by a path that forgot to build its environment from the
// allowlist.
func scrubAgentEnv() {
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "GPULAYER_") {
			_ = os.Unsetenv(name)
		}
	}
}

// secretFlags are the agent flags that carry a secret, with the variable
// that carries it instead.
var secretFlags = map[string]string{
	"join-token":     "GPULAYER_JOIN_TOKEN",
	"admin-token":    "GPULAYER_ADMIN_TOKEN",
	"instance-token": "GPULAYER_INSTANCE_TOKEN",
}

// errSecretOnArgv: a root agent was given a secret as a flag.
var errSecretOnArgv = errors.New("a secret on the command line")

// refuseSecretsOnArgv refuses a secret given as a flag to an agent running
// as root: its tasks run as other users, and every local user can read a
// process's command line in /proc/<pid>/cmdline (unless /proc is mounted
// with hidepid), while its environment is readable by root alone (and the
// agent unsets it once read). An agent that is not root runs its tasks as
// itself, which can read both anyway.
func refuseSecretsOnArgv(fs *pflag.FlagSet, euid int) error {
	if euid != 0 {
		return nil
	}
	var err error
	fs.Visit(func(fl *pflag.Flag) {
		if env, ok := secretFlags[fl.Name]; ok && err == nil {
			err = fmt.Errorf("%w: --%s would be readable by every local user, this agent's tasks included, in /proc/<pid>/cmdline; pass it in %s instead (an EnvironmentFile= of a systemd unit, say)", errSecretOnArgv, fl.Name, env)
		}
	})
	return err
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// buildAgent wires devices, the plugin host and the agent; close releases
// the devices and plugin processes.
func buildAgent(ctx context.Context, f agentFlags, log *slog.Logger) (*agent.Agent, func(), error) {
	if f.dataDir == "" {
		return nil, nil, usagef("--data-dir is required")
	}
	if f.coordinators == "" {
		return nil, nil, usagef("--coordinator (or GPULAYER_ADDR) is required")
	}
	if f.fakeFaults != "" && (f.fakeGPUs == devices.FakeReal || f.fakeGPUs == devices.FakeNone) {
		return nil, nil, usagef("--fake-gpu-faults needs --fake-gpus with one of %s", strings.Join(devices.FakeNames(), ", "))
	}
	var src devices.Source
	var err error
	if f.fakeFaults != "" {
		src, err = devices.OpenFakeWithFaults(ctx, log, f.fakeGPUs, f.dataDir, f.fakeFaults)
	} else {
		src, err = devices.OpenSeeded(ctx, log, f.fakeGPUs, f.dataDir)
	}
	if err != nil {
		return nil, nil, err
	}
	metrics := agent.NewMetrics()
	host, err := pluginhost.New(pluginhost.Config{Logger: log.With("component", "pluginhost"), PluginDir: f.pluginDir, PluginSHA256: f.pluginPins, Events: metrics, ProbeBuiltins: true})
	if err != nil {
		src.Close()
		return nil, nil, err
	}
	caps := splitList(f.capabilities)
	if caps == nil {
		caps = []string{}
	}
	labels, err := parseLabels(f.labels)
	if err != nil {
		host.Close()
		src.Close()
		return nil, nil, err
	}
	nccl, err := f.nccl.hints()
	if err != nil {
		host.Close()
		src.Close()
		return nil, nil, err
	}
	sandbox, err := f.taskSandbox()
	if err == nil && (f.spoolRecords < 0 || f.spoolMiB < 0 || f.spoolMiB > 1<<20) {
		// 0 (or a command without the flags, as dev) takes the defaults.
		err = usagef("--report-spool-max-records and --report-spool-max-mib take bounds of 0 (the default) or more (MiB at most 1048576)")
	}
	if err != nil {
		host.Close()
		src.Close()
		return nil, nil, err
	}
	a, err := agent.New(agent.Config{
		Coordinators: splitList(f.coordinators),
		CAFile:       f.caFile,
		ClientCert:   f.clientCert,
		ClientKey:    f.clientKey,
		JoinToken:    f.joinToken,

		InstanceToken:        f.instanceToken,
		InstanceID:           f.instanceID,
		Enroll:               f.enroll,
		ClusterKey:           f.clusterKey,
		ExternalWorkerKey:    f.externalWorkerKey,
		AdminToken:           f.adminToken,
		DataDir:              f.dataDir,
		WorkerID:             f.workerID,
		Capabilities:         caps,
		Labels:               labels,
		MaxTasks:             f.maxTasks,
		AdvertiseAddr:        f.advertiseAddr,
		InventoryInterval:    cmp.Or(f.inventoryInterval, -1),
		MIGDrainBound:        f.migDrainBound,
		StopGrace:            f.stopGrace,
		MPSPipeDir:           f.mpsPipeDir,
		CDIDir:               agentCDIDir(f.cdiDir, f.fakeGPUs, f.dataDir),
		NCCLHints:            nccl,
		FabricSysfs:          f.nccl.fabricSysfs,
		WorkDir:              f.workDir,
		TaskUser:             f.taskUser,
		TaskUIDBase:          uint32(f.taskUIDBase),
		TaskUIDLockDir:       f.taskUIDLockDir,
		TaskUIDSearch:        f.taskUIDSearch,
		AllowSharedUserTasks: f.allowSharedTasks,
		Metrics:              metrics,
		MetricsAddr:          f.metricsAddr,
		MetricsAllowRemote:   f.metricsAllowRemote,
		TaskSandbox:          sandbox,
		ReportSpool:          spool.Limits{MaxRecords: f.spoolRecords, MaxBytes: f.spoolMiB << 20},
		HealthPolicy:         f.health.policy(),
		HealthThresholds:     f.health.thresholds(),
		Devices:              src,
		Executors:            host,
		Logger:               log,
	})
	if err != nil {
		host.Close()
		src.Close()
		if errors.Is(err, agent.ErrMetricsAddr) {
			err = usagef("--metrics-addr: %w", err)
		}
		return nil, nil, err
	}
	return a, func() { host.Close(); src.Close() }, nil
}

func agentCmd() *cobra.Command {
	return group("agent", "run an agent on a GPU node",
		"  GPULAYER_JOIN_TOKEN=glj_… gpulayer agent run --coordinator https://c1:7070 --data-dir /var/lib/gpulayer/agent",
		agentRunCmd())
}

func agentRunCmd() *cobra.Command {
	var f agentFlags
	var lf logFlags
	cmd := &cobra.Command{
		Use:   "run [flags] --coordinator URL --data-dir DIR",
		Short: "register (or resume) and run tasks",
		Long: `run registers this machine as a worker (with a join token, an instance
token or through the allowlist) or resumes with the credential in its data
dir, and runs the tasks it is given.

Secrets (--join-token, --admin-token, --instance-token) belong in the
environment (GPULAYER_JOIN_TOKEN, …): an agent running as root refuses
them on the command line, where every local user can read them.`,
		Example: `  GPULAYER_JOIN_TOKEN=glj_… gpulayer agent run --coordinator https://c1:7070 --data-dir /var/lib/gpulayer/agent
  gpulayer agent run --coordinator http://127.0.0.1:7070 --data-dir /tmp/agent --fake-gpus dgxh100 --allow-shared-user-tasks
  gpulayer agent run --config /etc/gpulayer/agent.toml`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := refuseSecretsOnArgv(cmd.Flags(), os.Geteuid()); err != nil {
				return err
			}
			scrubAgentEnv()
			if f.taskUIDBase > math.MaxUint32 {
				return usagef("--task-uid-base %d is not a uid", f.taskUIDBase)
			}
			f.configFile, _ = cmd.Flags().GetString("config")
			a, closeFn, err := buildAgent(cmd.Context(), f, lf.logger())
			if err != nil {
				return err
			}
			defer closeFn()
			defer reloadOnSIGHUP(a, lf.logger())()
			ctx, cancel := context.WithCancel(cmd.Context())
			defer cancel()
			defer onTerminate(drainOnSIGTERM(ctx, cancel, a, f, lf.logger()))()
			return a.Run(ctx)
		},
	}
	f.register(cmd.Flags())
	lf.register(cmd.Flags())
	takesConfigFile(cmd)
	return cmd
}

// reloadOnSIGHUP has the agent read its credential file again on each
// SIGHUP (a credential reissued by an admin and written there), until the
// returned func is called.
func reloadOnSIGHUP(a *agent.Agent, log *slog.Logger) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-hup:
				changed, err := a.ReloadCredential()
				switch {
				case err != nil:
					log.Error("SIGHUP: reloading the worker credential", "error", err)
				case !changed:
					log.Info("SIGHUP: the credential file holds the credential in use")
				}
			case <-done:
				return
			}
		}
	}()
	return func() { signal.Stop(hup); close(done) }
}
