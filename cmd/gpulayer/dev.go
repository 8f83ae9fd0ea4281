package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpulayer/gpulayer/agent"
	"github.com/gpulayer/gpulayer/agent/devices"
	"github.com/gpulayer/gpulayer/coordinator"
)

// devCmd runs a coordinator and an agent in one process over a temporary
// data dir: the embedded default a newcomer runs first.
func devCmd() *cobra.Command {
	var o devOptions
	cmd := &cobra.Command{
		Use:   "dev [flags]",
		Short: "a coordinator and an agent in one process",
		Long: `dev runs a coordinator and an agent in one process over a temporary data
dir and prints the address and the admin token to use, and writes them to
--env-file, once the agent has registered and can take tasks. Without an
NVIDIA driver the agent serves fake H100s.

As root each task runs as a uid of its own, one per slot, from 61000: when
another agent on this host holds that range (or a user of the host has a
uid in it), dev takes the next free one and says which. --task-uid-base
asks for one range, and dev fails if it is not free.`,
		Example: "  gpulayer dev\n  gpulayer dev --http-addr 127.0.0.1:0 --env-file /tmp/gpulayer.env --keep\n  sudo gpulayer dev --task-uid-base 62000",
		Args:    noArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return devRun(cmd.Context(), o) },
	}
	fs := cmd.Flags()
	fs.StringVar(&o.httpAddr, "http-addr", "127.0.0.1:7070", "coordinator HTTP address (loopback)")
	fs.StringVar(&o.fake, "fake-gpus", "auto", "fake GPUs: auto (dgxh100 when no driver), none, "+fmt.Sprint(devices.FakeNames()))
	fs.StringVar(&o.pluginDir, "plugin-dir", "", "directory of gpulayer-executor-<name> plugins")
	fs.StringVar(&o.envFile, "env-file", "", "write GPULAYER_ADDR and GPULAYER_TOKEN to this file (mode 0600) once ready")
	fs.BoolVar(&o.keep, "keep", false, "keep the temporary data dir on exit")
	fs.UintVar(&o.taskUIDBase, "task-uid-base", 0, fmt.Sprintf("as root: task slot i runs as uid and gid base+i, this range or fail (default: %d, or the first free range after it)", agent.DefaultTaskUIDBase))
	fs.StringVar(&o.taskUIDLockDir, "task-uid-lock-dir", agent.DefaultTaskUIDLockDir, "where agents on this host lock their task uid ranges")
	fs.StringVar(&o.agentMetricsAddr, "agent-metrics-addr", "", "serve the agent's Prometheus metrics at GET /metrics on this loopback HOST:PORT (default: not served; the coordinator's are on --http-addr)")
	o.lf.register(fs)
	return cmd
}

// devOptions are the flags of gpulayer dev.
type devOptions struct {
	httpAddr, fake, pluginDir, envFile string
	agentMetricsAddr                   string
	keep                               bool
	lf                                 logFlags
	taskUIDBase                        uint // 0: the default, searching past held ranges
	taskUIDLockDir                     string
}

// devReadyWait bounds how long dev waits for its agent to be ready.
const devReadyWait = 60 * time.Second

// taskUIDs turns --task-uid-base into the agent's base and whether it may
// search past a range it cannot have.
func (o devOptions) taskUIDs() (base uint, search bool, err error) {
	if o.taskUIDBase > math.MaxUint32-math.MaxUint16 {
		return 0, false, usagef("--task-uid-base %d is not a uid range's start (at most %d)", o.taskUIDBase, math.MaxUint32-math.MaxUint16)
	}
	if o.taskUIDBase == 0 {
		return agent.DefaultTaskUIDBase, true, nil
	}
	return o.taskUIDBase, false, nil
}

func devRun(ctx context.Context, o devOptions) error {
	log := o.lf.logger()
	uidBase, uidSearch, err := o.taskUIDs()
	if err != nil {
		return err
	}
	if err := agent.CheckMetricsAddr(o.agentMetricsAddr, false); err != nil {
		return usagef("--agent-metrics-addr: %q is not a loopback HOST:PORT (dev serves the agent's metrics on loopback only): %w", o.agentMetricsAddr, agent.ErrMetricsAddr)
	}
	dir, err := os.MkdirTemp("", "gpulayer-dev-")
	if err != nil {
		return err
	}
	if !o.keep {
		defer os.RemoveAll(dir)
	}
	cdir, adir := filepath.Join(dir, "coordinator"), filepath.Join(dir, "agent")
	toks, err := coordinator.Init(cdir, false, time.Now())
	if err != nil {
		return err
	}
	// Raft runs in process: dev's coordinator has no peers, and no port of
	// its Raft is there for a task (or anyone on the host) to reach.
	srv, err := coordinator.New(coordinator.Config{DataDir: cdir, HTTPAddr: o.httpAddr, RaftInProcess: true, NodeID: "dev", Logger: log})
	if err != nil {
		return err
	}
	// The coordinator outlives the agent: at shutdown the agent hands its
	// running tasks back, which needs the coordinator, so the coordinator
	// stops only once the agent has (stop below).
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srvCtx, stopSrv := context.WithCancel(context.WithoutCancel(ctx))
	defer stopSrv()
	var wg, agentWG sync.WaitGroup
	stop := func() {
		cancel()
		agentWG.Wait()
		stopSrv()
		wg.Wait()
	}
	errc := make(chan error, 2)
	wg.Add(1)
	go func() {
		defer wg.Done()
		errc <- srv.Run(srvCtx)
	}()
	if err := waitLeader(ctx, srv); err != nil {
		stop()
		return err
	}

	fakeGPUs := o.fake
	if fakeGPUs == "auto" {
		fakeGPUs = ""
		probe, err := devices.Open(ctx, log, "")
		if err == nil {
			if devs, _ := probe.Devices(ctx); len(devs) == 0 {
				fakeGPUs = "dgxh100"
				log.Info("no GPUs found; dev mode uses fake dgxh100 GPUs")
			}
			probe.Close()
		}
	}
	// As root, dev tasks run as uids of their own, like a real agent's.
	// As a normal user they run as that user: dev mode is one person's
	// sandbox on their own machine, so it accepts shared-user tasks
	// without the flag, and says so.
	shared := os.Geteuid() != 0
	if shared {
		log.Info("dev mode runs tasks as your own user (an agent started with `gpulayer agent run` refuses to unless it is root or given --allow-shared-user-tasks)")
	}
	a, closeAgent, err := buildAgent(ctx, agentFlags{coordinators: srv.URL(), joinToken: toks.JoinToken, dataDir: adir, workerID: "dev-worker", fakeGPUs: fakeGPUs, pluginDir: o.pluginDir, capabilities: "*", stopGrace: 5 * time.Second, allowSharedTasks: shared, metricsAddr: o.agentMetricsAddr,
		taskUIDBase: uidBase, taskUIDSearch: uidSearch, taskUIDLockDir: o.taskUIDLockDir}, log)
	if err != nil {
		stop()
		return err
	}
	defer closeAgent()
	agentWG.Add(1)
	go func() {
		defer agentWG.Done()
		if err := a.Run(ctx); err != nil {
			if !strings.HasPrefix(err.Error(), "agent: ") {
				err = fmt.Errorf("agent: %w", err)
			}
			errc <- err
		}
	}()

	// Running means the agent holds its task uids and its credential: an
	// agent that fails to start (a task uid range it cannot have, say)
	// fails dev before anything says it runs or the env file exists.
	if err := waitAgent(ctx, a, errc); err != nil {
		stop()
		return err
	}
	uids := ""
	if lo, hi, ok := a.TaskUIDs(); ok {
		uids = fmt.Sprintf("  task uids: %d … %d\n", lo, hi)
		if uidSearch && lo != agent.DefaultTaskUIDBase {
			uids = fmt.Sprintf("  task uids: %d … %d (%d … is held by another agent on this host, or used by a user or group of it)\n", lo, hi, agent.DefaultTaskUIDBase)
		}
	}
	if o.envFile != "" {
		content := fmt.Sprintf("GPULAYER_ADDR=%s\nGPULAYER_TOKEN=%s\n", srv.URL(), toks.AdminToken)
		if err := writeFileAtomic(o.envFile, []byte(content)); err != nil {
			stop()
			return err
		}
	}
	fmt.Fprintf(humanOut, "GpuLayer dev is running.\n  GPULAYER_ADDR=%s\n  GPULAYER_TOKEN=%s\n  data dir: %s\n%sPress Ctrl-C to stop.\n", srv.URL(), toks.AdminToken, dir, uids)
	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-errc:
	}
	stop()
	return runErr
}

// waitAgent waits until a is ready, or fails with what ended it first.
func waitAgent(ctx context.Context, a *agent.Agent, errc <-chan error) error {
	timer := time.NewTimer(devReadyWait)
	defer timer.Stop()
	select {
	case <-a.Ready():
		return nil
	case err := <-errc:
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return fmt.Errorf("dev: the agent was not ready within %s", devReadyWait)
	}
}

// writeFileAtomic writes content to path, mode 0600, by a rename: a
// reader polling for the file never sees it half written.
func writeFileAtomic(path string, content []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // gone after the rename; a leftover otherwise
	if _, err := tmp.Write(content); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func waitLeader(ctx context.Context, srv *coordinator.Server) error {
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !srv.LeaderReady() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return errors.New("dev: coordinator did not become leader within 30s")
		case <-tick.C:
		}
	}
	return nil
}
