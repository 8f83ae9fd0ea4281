package coordinator

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpulayer/gpulayer/coordinator/blob"
	"github.com/gpulayer/gpulayer/coordinator/cluster"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/fsm"
	"github.com/gpulayer/gpulayer/coordinator/httpapi"
	"github.com/gpulayer/gpulayer/coordinator/lease"
	"github.com/gpulayer/gpulayer/coordinator/outputstore"
	"github.com/gpulayer/gpulayer/coordinator/preempt"
	"github.com/gpulayer/gpulayer/coordinator/sched"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/internal/telemetry"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Server is one coordinator.
type Server struct {
	cfg       Config
	store     *state.Store
	node      *cluster.Node
	leases    *lease.Manager
	api       *httpapi.Server
	http      *http.Server
	listener  net.Listener
	bootstrap bootstrapFile
	scheme    string
	blobs     *blob.Store
	output    *outputstore.Store

	needsFormation bool
	forward        http.RoundTripper

	mu          sync.Mutex
	leaderReady bool
	bootStamp   string
}

// New opens the data dir, starts Raft and binds the HTTP listener. Call
// Run to serve.
func New(cfg Config) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if err := secureDataDir(cfg.DataDir, cfg.Logger); err != nil {
		return nil, err
	}
	var boot bootstrapFile
	var err error
	if cfg.BootstrapFile != "" {
		boot, err = readBootstrapFile(cfg.BootstrapFile)
	} else {
		boot, err = readBootstrap(cfg.DataDir)
	}
	if err != nil {
		return nil, err
	}
	// Task output lives in its own file, rebuilt from the snapshot and
	// the log on every start (package outputstore).
	output, err := outputstore.Open(filepath.Join(cfg.DataDir, outputstore.FileName), outputstore.Options{MmapBytes: mmapFor(cfg.Quotas.MaxOutputBytes)})
	if err != nil {
		return nil, err
	}
	opened := false
	defer func() {
		if !opened {
			_ = output.Close()
		}
	}()
	s := &Server{cfg: cfg, store: state.NewWithOutput(output), output: output, bootstrap: boot, scheme: "http"}

	peer, err := peerTLS(cfg)
	if err != nil {
		return nil, err
	}
	if !cfg.raftTLS() && cfg.AllowInsecureRaft {
		cfg.Logger.Warn("Raft on a non-loopback address is authenticated by the cluster key alone (--allow-insecure-raft): whoever reads that key can replace this cluster's whole state; use operator certificates (--raft-tls-*) outside isolated labs", "raft_addr", cfg.RaftAddr, "raft_advertise", cfg.RaftAdvertise)
	}
	tlsConf, err := serverTLS(cfg, peer)
	if err != nil {
		return nil, err
	}
	if tlsConf != nil {
		s.scheme = "https"
	}
	fwd := forwardTransport(peer)
	trusted, err := parseCIDRFlag("--trusted-proxy-cidrs", cfg.TrustedProxyCIDRs)
	if err != nil {
		return nil, err
	}
	exempt, err := parseCIDRFlag("--rate-limit-exempt-cidrs", cfg.RateLimitExemptCIDRs)
	if err != nil {
		return nil, err
	}
	limits := cfg.RateLimits
	if exempt != nil {
		limits.Exempt = exempt
	}
	sso, err := newSSO(cfg)
	if err != nil {
		return nil, err
	}
	blobs, err := blob.Open(filepath.Join(cfg.DataDir, "artifacts"))
	if err != nil {
		return nil, err
	}
	s.blobs = blobs
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return nil, fmt.Errorf("coordinator: listen %s: %w", cfg.HTTPAddr, err)
	}
	if tlsConf != nil {
		ln = tls.NewListener(ln, tlsConf)
	} else {
		ln = peerListener{Listener: ln, peer: peer.ServerConfig()}
	}
	s.listener = ln

	// Raft reports through go-metrics' global, installed once per process.
	if _, err := telemetry.Shared(); err != nil {
		ln.Close()
		return nil, err
	}
	machine := fsm.New(s.store)
	node, err := cluster.Open(cluster.Config{
		NodeID:             cfg.NodeID,
		RaftAddr:           cfg.RaftAddr,
		InProcess:          cfg.RaftInProcess,
		DataDir:            cfg.DataDir,
		RaftAdvertise:      cfg.RaftAdvertise,
		Dial:               cfg.RaftDial,
		Stores:             cfg.RaftStores,
		TLS:                peer,
		FSM:                machine,
		Logger:             cfg.Logger,
		HeartbeatTimeout:   cfg.RaftHeartbeatTimeout,
		ElectionTimeout:    cfg.RaftElectionTimeout,
		LeaderLeaseTimeout: cfg.RaftLeaderLeaseTimeout,
		SnapshotThreshold:  cfg.RaftSnapshotThreshold,
		SnapshotInterval:   cfg.RaftSnapshotInterval,
	})
	if err != nil {
		ln.Close()
		return nil, err
	}
	s.node = node
	has, err := node.HasState()
	if err != nil {
		_ = node.Shutdown()
		ln.Close()
		return nil, err
	}
	switch {
	case has:
		// A restarted server rejoins its cluster from the data dir.
	case cfg.BootstrapExpect <= 1 && len(cfg.Join) == 0:
		if err := node.BootstrapWith(nil); err != nil {
			_ = node.Shutdown()
			ln.Close()
			return nil, err
		}
	default:
		s.needsFormation = true
	}
	s.leases = lease.New(lease.Config{
		Clock:             cfg.Clock,
		State:             s.store,
		Propose:           s.Propose,
		Logger:            cfg.Logger.With("component", "lease"),
		Grace:             cfg.LeaseGrace,
		Tick:              cfg.LeaseTick,
		HeartbeatInterval: cfg.HeartbeatInterval,
	})
	sc := sched.New(s.store, s.Propose, s.leases, cfg.Clock)
	s.api = httpapi.New(httpapi.Config{
		Store:   s.store,
		Cluster: clusterView{node: node},
		Propose: s.Propose,
		Sched:   sc,
		Leases:  s.leases,
		Clock:   cfg.Clock,
		Logger:  cfg.Logger,

		Ready:            s.LeaderReady,
		Self:             s.self,
		Operator:         node,
		Snapshots:        machine,
		CollectGarbage:   s.CollectGarbage,
		ForwardTransport: fwd,
		IsPeer:           peerCheck(peer),
		HTTPSPeers:       tlsConf != nil,

		TrustedProxies:   trusted,
		RequireIPBinding: cfg.RequireIPBinding,
		RateLimits:       limits,
		AuditFlush:       cfg.AuditFlush,
		Blobs:            blobs,
		Quotas:           cfg.Quotas,
		PreflightGangs:   cfg.PreflightGangs,
		Streams:          cfg.Streams,
		Collectors:       []prometheus.Collector{node.Collector()},
		SSO:              sso,
	})
	s.forward = fwd
	opened = true
	s.http = &http.Server{
		Handler:           s.api,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       2 * time.Minute,
		WriteTimeout:      time.Duration(api.MaxWaitSeconds+30) * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    httpapi.ServerMaxHeaderBytes, // api.MaxHeaderBytes is enforced in httpapi, with a JSON answer
		ConnContext:       withConn,
		ErrorLog:          telemetry.ErrorLog(cfg.Logger.With("component", "http.server"), slog.LevelWarn),
	}
	return s, nil
}

// mmapFor is the output file's mapping for a total output bound: twice
// the bound (the file holds about 1.4 times its data), at least the
// default, so that the file stays inside its first mapping and a
// snapshot's read transaction never holds up applies (outputstore).
func mmapFor(bound int) int {
	if bound <= outputstore.DefaultMmapBytes/2 {
		return outputstore.DefaultMmapBytes
	}
	return min(bound, math.MaxInt/2) * 2
}

// URL is the base URL clients and peers use to reach this coordinator.
func (s *Server) URL() string {
	if s.cfg.HTTPAdvertise != "" {
		return s.cfg.HTTPAdvertise
	}
	return s.scheme + "://" + s.listener.Addr().String()
}

// Store exposes the replicated state (read-only use).
func (s *Server) Store() *state.Store { return s.store }

// Routes is the HTTP route table.
func (s *Server) Routes() []httpapi.Route { return s.api.Routes() }

// Node exposes the Raft node.
func (s *Server) Node() *cluster.Node { return s.node }

// Propose encodes and proposes a command, returning the state machine's
// result (a state.Proposer; state.Propose reads its outcome typed).
func (s *Server) Propose(ctx context.Context, c command.Command) (state.Result, error) {
	entry, err := command.Encode(c)
	if err != nil {
		return state.Result{}, err
	}
	out, err := s.node.Apply(ctx, entry)
	if err != nil {
		return state.Result{}, err
	}
	res, ok := out.(state.Result)
	if !ok {
		return state.Result{}, fmt.Errorf("coordinator: unexpected apply result %T", out)
	}
	return res, nil
}

// Run serves until ctx ends, then shuts down HTTP and Raft.
func (s *Server) Run(ctx context.Context) error {
	log := s.cfg.Logger.With("component", "coordinator")
	errc := make(chan error, 1)
	go func() {
		err := s.http.Serve(s.listener)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		errc <- err
	}()
	log.Info("coordinator serving", "url", s.URL(), "raft_addr", s.node.Addr(), "node_id", s.node.ID())

	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		s.leadership(ctx)
	}()
	go func() {
		defer wg.Done()
		s.sweepArtifacts(ctx, log)
	}()
	go func() {
		defer wg.Done()
		s.api.Run(ctx)
	}()
	if s.needsFormation {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.form(ctx)
		}()
	}

	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if s.http.Shutdown(shutCtx) != nil {
		// What still runs after the grace (a following log stream waits
		// for its job) is cut, as the end of the process would: its
		// client resumes through another coordinator.
		_ = s.http.Close()
	}
	wg.Wait()
	if serr := s.node.Shutdown(); err == nil && serr != nil && !errors.Is(serr, cluster.ErrShutdown) {
		err = serr
	}
	if oerr := s.output.Close(); err == nil && oerr != nil {
		err = oerr
	}
	log.Info("coordinator stopped")
	return err
}

// leadership runs the leader-only duties while this node leads: it waits
// for the log to be applied (Barrier), records its HTTP address, imports
// init's credentials, and runs the lease timers.
func (s *Server) leadership(ctx context.Context) {
	log := s.cfg.Logger.With("component", "leader")
	var stop context.CancelFunc
	var done chan struct{}
	check := time.NewTicker(500 * time.Millisecond)
	defer check.Stop()
	var announcing atomic.Bool
	step := func() {
		leading := s.node.IsLeader()
		switch {
		case leading && stop == nil:
			lctx, cancel := context.WithCancel(ctx)
			if err := s.takeOffice(lctx); err != nil {
				cancel()
				log.Warn("taking office failed; will retry", "error", err)
				return
			}
			stop = cancel
			done = make(chan struct{})
			go func(d chan struct{}) {
				defer close(d)
				gcDone := make(chan struct{})
				go func() { defer close(gcDone); s.collectGarbage(lctx, log) }()
				drainDone := make(chan struct{})
				go func() { defer close(drainDone); s.expireDrains(lctx, log) }()
				preemptDone := make(chan struct{})
				go func() {
					defer close(preemptDone)
					preempt.New(s.store, s.Propose, s.cfg.Clock, log.With("loop", "preempt"), s.cfg.Preemption).Run(lctx)
				}()
				migDone := make(chan struct{})
				go func() { defer close(migDone); s.autoRepartition(lctx, log) }() // migauto.go
				_ = s.leases.Run(lctx)
				<-gcDone
				<-drainDone
				<-preemptDone
				<-migDone
			}(done)
			s.setLeaderReady(true)
			log.Info("leading")
		case leading && stop != nil:
			s.reloadBootstrap(ctx, log)
		case !leading && stop != nil:
			s.setLeaderReady(false)
			stop()
			<-done
			stop = nil
			log.Info("stepped down")
		case !leading && announcing.CompareAndSwap(false, true):
			// In the background: an unreachable leader must not hold up
			// this loop (taking office when this node is elected).
			go func() {
				defer announcing.Store(false)
				if err := s.announceAddr(ctx); err != nil && ctx.Err() == nil {
					log.Debug("telling the leader this coordinator's address", "error", err)
				}
			}()
		}
	}
	for {
		step()
		select {
		case <-ctx.Done():
			if stop != nil {
				stop()
				<-done
			}
			return
		case <-s.node.LeaderCh():
		case <-check.C:
		}
	}
}

func (s *Server) takeOffice(ctx context.Context) error {
	bctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := s.node.Barrier(bctx); err != nil {
		return fmt.Errorf("barrier: %w", err)
	}
	// The address is written only when the state does not hold it yet: a
	// write here is a commit more between election and office, which a
	// failover waits on.
	if s.store.NodeHTTPAddr(s.node.ID()) != s.URL() {
		if _, err := state.Propose[struct{}](bctx, s.Propose, command.RegisterNode{NodeID: s.node.ID(), HTTPAddr: s.URL()}); err != nil {
			return fmt.Errorf("register node: %w", err)
		}
	}
	if s.bootstrap.Generation > s.store.BootstrapGeneration() {
		if _, err := state.Propose[bool](bctx, s.Propose, command.ImportBootstrap{Generation: s.bootstrap.Generation, Credentials: s.bootstrap.Credentials, Now: s.cfg.Clock.Now().UTC()}); err != nil {
			return fmt.Errorf("import bootstrap credentials: %w", err)
		}
	}
	return nil
}

func (s *Server) setLeaderReady(v bool) {
	s.mu.Lock()
	s.leaderReady = v
	s.mu.Unlock()
}

// LeaderReady reports whether this node leads and has taken office.
func (s *Server) LeaderReady() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.leaderReady
}

// clusterView adapts the Raft node to what the HTTP API needs.
type clusterView struct{ node *cluster.Node }

func (c clusterView) ID() string               { return c.node.ID() }
func (c clusterView) IsLeader() bool           { return c.node.IsLeader() }
func (c clusterView) AppliedIndex() uint64     { return c.node.Raft().AppliedIndex() }
func (c clusterView) Leader() (string, string) { return c.node.Leader() }
func (c clusterView) Peers() ([]api.Peer, error) {
	servers, err := c.node.Servers()
	if err != nil {
		return nil, err
	}
	_, leaderID := c.node.Leader()
	out := make([]api.Peer, len(servers))
	for i, sv := range servers {
		out[i] = api.Peer{ID: string(sv.ID), Address: string(sv.Address), Suffrage: sv.Suffrage.String(), Leader: string(sv.ID) == leaderID}
	}
	return out, nil
}
