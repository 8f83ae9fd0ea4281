package telemetry

import (
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler serves own (a component's registry) and the shared registry in
// the Prometheus text format. A collector that fails is logged and left
// out; the rest are still served.
func Handler(log *slog.Logger, own prometheus.Gatherer) http.Handler {
	g := prometheus.Gatherers{own}
	if shared, err := Shared(); err == nil {
		g = append(g, shared)
	} else {
		log.Error("metrics: Raft and runtime metrics are not served", "error", err)
	}
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{
		ErrorLog:      ErrorLog(log.With("component", "metrics"), slog.LevelError),
		ErrorHandling: promhttp.ContinueOnError,
	})
}
