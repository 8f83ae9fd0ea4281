package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
dir and prints the address and the admin token to use. Without an NVIDIA
driver the agent serves fake H100s.`,
		Example: "  gpulayer dev\n  gpulayer dev --http-addr 127.0.0.1:0 --env-file /tmp/gpulayer.env --keep",
		Args:    noArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return devRun(cmd.Context(), o) },
	}
	fs := cmd.Flags()
	fs.StringVar(&o.httpAddr, "http-addr", "127.0.0.1:7070", "coordinator HTTP address (loopback)")
	fs.StringVar(&o.fake, "fake-gpus", "auto", "fake GPUs: auto (dgxh100 when no driver), none, "+fmt.Sprint(devices.FakeNames()))
	fs.StringVar(&o.pluginDir, "plugin-dir", "", "directory of gpulayer-executor-<name> plugins")
	fs.StringVar(&o.envFile, "env-file", "", "write GPULAYER_ADDR and GPULAYER_TOKEN to this file (mode 0600) once ready")
	fs.BoolVar(&o.keep, "keep", false, "keep the temporary data dir on exit")
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
}

func devRun(ctx context.Context, o devOptions) error {
	log := o.lf.logger()
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
	a, closeAgent, err := buildAgent(ctx, agentFlags{coordinators: srv.URL(), joinToken: toks.JoinToken, dataDir: adir, workerID: "dev-worker", fakeGPUs: fakeGPUs, pluginDir: o.pluginDir, capabilities: "*", stopGrace: 5 * time.Second, allowSharedTasks: shared, metricsAddr: o.agentMetricsAddr}, log)
	if err != nil {
		stop()
		return err
	}
	defer closeAgent()
	agentWG.Add(1)
	go func() {
		defer agentWG.Done()
		if err := a.Run(ctx); err != nil {
			errc <- fmt.Errorf("agent: %w", err)
		}
	}()

	fmt.Fprintf(humanOut, "GpuLayer dev is running.\n  GPULAYER_ADDR=%s\n  GPULAYER_TOKEN=%s\n  data dir: %s\nPress Ctrl-C to stop.\n", srv.URL(), toks.AdminToken, dir)
	if o.envFile != "" {
		content := fmt.Sprintf("GPULAYER_ADDR=%s\nGPULAYER_TOKEN=%s\n", srv.URL(), toks.AdminToken)
		if err := os.WriteFile(o.envFile, []byte(content), 0o600); err != nil {
			stop()
			return err
		}
	}
	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-errc:
	}
	stop()
	return runErr
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
