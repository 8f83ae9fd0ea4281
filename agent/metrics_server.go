package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/gpulayer/gpulayer/internal/telemetry"
)

// Timeouts of the metrics server: a scrape is one small request.
const (
	metricsReadHeaderTimeout = 5 * time.Second
	metricsWriteTimeout      = 30 * time.Second
	metricsIdleTimeout       = 2 * time.Minute
	metricsShutdownTimeout   = 5 * time.Second
)

// CheckMetricsAddr is checkMetricsAddr, for a command that starts an
// agent and wants to refuse a bad address before starting anything.
func CheckMetricsAddr(addr string, allowRemote bool) error {
	return checkMetricsAddr(addr, allowRemote)
}

// checkMetricsAddr refuses a metrics address that is not HOST:PORT, or
// that is not loopback unless allowRemote: the endpoint has neither TLS
// nor authentication, and shows GPU UUIDs, executor names and the
// worker's state to whoever reaches it. Empty means no endpoint.
func checkMetricsAddr(addr string, allowRemote bool) error {
	if addr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%w: %q is not HOST:PORT: %v", ErrMetricsAddr, addr, err)
	}
	if allowRemote || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%w: %s is not a loopback address; the endpoint has no TLS or authentication (allow it with --metrics-allow-remote and keep the port behind your network rules)", ErrMetricsAddr, addr)
}

// startMetrics adds the collectors of the agent's state to its metrics and,
// with an address configured, serves them at GET /metrics until the
// returned func is called. A listener that cannot be opened is an error
// naming the address.
func (a *Agent) startMetrics() (stop func(), err error) {
	state, gpus := stateCollector{a}, gpuCollector{a}
	if err := a.cfg.Metrics.reg.Register(state); err != nil {
		return nil, fmt.Errorf("agent: metrics: %w", err)
	}
	if err := a.cfg.Metrics.reg.Register(gpus); err != nil {
		a.cfg.Metrics.reg.Unregister(state)
		return nil, fmt.Errorf("agent: metrics: %w", err)
	}
	unregister := func() { a.cfg.Metrics.reg.Unregister(state); a.cfg.Metrics.reg.Unregister(gpus) }
	if a.cfg.MetricsAddr == "" {
		return unregister, nil
	}
	ln, err := net.Listen("tcp", a.cfg.MetricsAddr)
	if err != nil {
		unregister()
		return nil, fmt.Errorf("agent: serving metrics on %s: %w", a.cfg.MetricsAddr, err)
	}
	log := a.cfg.Logger.With("component", "metrics")
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", telemetry.Handler(log, a.cfg.Metrics.reg))
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: metricsReadHeaderTimeout,
		ReadTimeout:       metricsReadHeaderTimeout,
		WriteTimeout:      metricsWriteTimeout,
		IdleTimeout:       metricsIdleTimeout,
		ErrorLog:          telemetry.ErrorLog(log, slog.LevelWarn),
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server stopped", "error", err)
		}
	}()
	log.Info("serving metrics", "addr", ln.Addr().String())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), metricsShutdownTimeout)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			_ = srv.Close()
		}
		<-served
		unregister()
	}, nil
}
