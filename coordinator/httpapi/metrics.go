package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/internal/telemetry"
)

// unmatchedRoute labels requests that matched no route pattern (a method
// the path does not take); requests for unknown paths match "/".
const unmatchedRoute = "unmatched"

// durationBuckets reach past a long poll's longest wait, which a request
// to acquire or a log follow stream spends on purpose.
var durationBuckets = []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300}

// metrics are the HTTP layer's own collectors, in a registry of this
// server's (a process may run several coordinators).
type metrics struct {
	reg         *prometheus.Registry
	duration    *prometheus.HistogramVec
	responses   *prometheus.CounterVec
	authRefused *prometheus.CounterVec
	handler     http.Handler
}

func newMetrics(s *Server, extra []prometheus.Collector) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gpulayer_http_request_duration_seconds",
			Help:    "Time to answer HTTP requests, by route pattern and status code (long polls and streams included).",
			Buckets: durationBuckets,
		}, []string{"route", "code"}),
		responses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gpulayer_http_responses_total",
			Help: "HTTP responses by status code.",
		}, []string{"code"}),
		authRefused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gpulayer_auth_refused_total",
			Help: "Requests refused at authentication or authorisation, by kind of refusal.",
		}, []string{"kind"}),
	}
	for _, k := range refusalKinds {
		m.authRefused.WithLabelValues(string(k))
	}
	m.reg.MustRegister(m.duration, m.responses, m.authRefused, stateCollector{s})
	m.reg.MustRegister(extra...)
	m.handler = telemetry.Handler(s.log, m.reg)
	return m
}

// observe records one answered request.
func (m *metrics) observe(route string, status int, took time.Duration) {
	if status == 0 {
		status = http.StatusOK
	}
	if route == "" {
		route = unmatchedRoute
	}
	code := strconv.Itoa(status)
	m.duration.WithLabelValues(route, code).Observe(took.Seconds())
	m.responses.WithLabelValues(code).Inc()
}

// refused counts one refused credential.
func (m *metrics) refused(kind refusalKind) { m.authRefused.WithLabelValues(string(kind)).Inc() }

// routeOf is the pattern of the route r was (or would have been) served
// by: the mux sets r.Pattern when it serves r; a request answered before
// (forwarded, rate limited) is matched here. Never the raw path, so the
// label's values are the route table's.
func (s *Server) routeOf(r *http.Request) string {
	if r.Pattern != "" {
		return r.Pattern
	}
	_, pattern := s.mux.Handler(r)
	return pattern
}

func (s *Server) metricsHandler(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	s.metrics.handler.ServeHTTP(w, r)
	return nil
}
