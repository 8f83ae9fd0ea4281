package main

import (
	"context"
	"expvar"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	raftboltdb "github.com/hashicorp/raft-boltdb/v2"

	"github.com/gpulayer/gpulayer/bench/rawraft"
	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/plugins"
)

// childMain runs the process the benchmark re-executed itself as.
func childMain(mode string, args []string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch mode {
	case "__coordinator":
		return coordinatorChild(ctx, args)
	case "__plainhttp":
		return plainHTTPChild(ctx, args)
	case "__rawraft":
		return rawraft.ChildMain(args, map[string]rawraft.StoreFactory{"boltdb": boltStore})
	case "__plugin":
		if len(args) != 1 {
			return fmt.Errorf("usage: __plugin <name>")
		}
		return plugins.ServeBuiltin(args[0])
	}
	return fmt.Errorf("unknown child mode %q", mode)
}

// boltStore opens raft-boltdb as coordinator/cluster does.
func boltStore(dir string) (rawraft.Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	return raftboltdb.New(raftboltdb.Options{Path: filepath.Join(dir, "raft.db")})
}

// coordinatorChild runs one coordinator as `gpulayer coordinator run`
// would, plus a loopback debug listener (pprof, expvar) that the
// coordinator itself does not have, for profiles and heap figures.
func coordinatorChild(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("coordinator", flag.ContinueOnError)
	var cfg coordinator.Config
	var join, debugAddr string
	fs.StringVar(&cfg.NodeID, "node-id", "", "")
	fs.StringVar(&cfg.DataDir, "data-dir", "", "")
	fs.StringVar(&cfg.HTTPAddr, "http-addr", "", "")
	fs.StringVar(&cfg.RaftAddr, "raft-addr", "", "")
	fs.IntVar(&cfg.BootstrapExpect, "bootstrap-expect", 0, "")
	fs.StringVar(&join, "join", "", "")
	fs.DurationVar(&cfg.HeartbeatInterval, "heartbeat-interval", 0, "")
	fs.DurationVar(&cfg.LeaseGrace, "lease-grace", 0, "")
	fs.DurationVar(&cfg.RaftHeartbeatTimeout, "raft-heartbeat", 0, "")
	fs.DurationVar(&cfg.RaftElectionTimeout, "raft-election", 0, "")
	fs.StringVar(&debugAddr, "debug-addr", "", "")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if join != "" {
		cfg.Join = strings.Split(join, ",")
	}
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})).With("node", cfg.NodeID)
	if debugAddr != "" {
		if err := serveDebug(ctx, debugAddr); err != nil {
			return err
		}
	}
	srv, err := coordinator.New(cfg)
	if err != nil {
		return err
	}
	return srv.Run(ctx)
}

// serveDebug serves pprof, expvar and a GC trigger on a loopback address.
func serveDebug(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.Handle("/debug/vars", expvar.Handler())
	mux.HandleFunc("/debug/gc", func(w http.ResponseWriter, r *http.Request) {
		runtime.GC()
		debug.FreeOSMemory()
		w.WriteHeader(http.StatusNoContent)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	return nil
}
