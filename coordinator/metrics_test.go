package coordinator_test

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// scrape reads /metrics of the coordinator at url (no credential: the
// route is public) and parses it.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	r := call(t, url, "GET", "/metrics", "", nil, nil)
	if r.status != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", r.status, r.raw)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(r.raw))
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// metricOf is the series of family name whose labels include want (nil
// if none).
func metricOf(fams map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Metric {
	f := fams[name]
	if f == nil {
		return nil
	}
	for _, m := range f.GetMetric() {
		match := 0
		for _, l := range m.GetLabel() {
			if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
				match++
			}
		}
		if match == len(want) {
			return m
		}
	}
	return nil
}

// value is a series' value (a histogram's count), 0 when absent.
func value(fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	m := metricOf(fams, name, labels)
	switch {
	case m == nil:
		return 0
	case m.GetHistogram() != nil:
		return float64(m.GetHistogram().GetSampleCount())
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	default:
		return m.GetGauge().GetValue()
	}
}

// TestMetricsLatencyByRouteAndCode: each request lands in the histogram
// under its route pattern (never its path) and its status code.
func TestMetricsLatencyByRouteAndCode(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	cases := []struct {
		name, method, path, token string
		route, code               string
	}{
		{"list", "GET", "/v1/jobs", h.AdminToken, "GET /v1/jobs", "200"},
		{"unknown job", "GET", "/v1/jobs/j-does-not-exist", h.AdminToken, "GET /v1/jobs/{id}", "404"},
		{"health", "GET", "/v1/status/health", "", "GET /v1/status/health", "200"},
		{"no route", "GET", "/v1/nothing/here", h.AdminToken, "/", "404"},
		{"no credential", "GET", "/v1/tokens", "", "GET /v1/tokens", "401"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			labels := map[string]string{"route": c.route, "code": c.code}
			before := value(scrape(t, h.URL), "gpulayer_http_request_duration_seconds", labels)
			if r := call(t, h.URL, c.method, c.path, c.token, nil, nil); r.status != atoi(t, c.code) {
				t.Fatalf("%s %s: %d, want %s", c.method, c.path, r.status, c.code)
			}
			fams := scrape(t, h.URL)
			if got := value(fams, "gpulayer_http_request_duration_seconds", labels); got != before+1 {
				t.Errorf("histogram count for %v: %v, want %v", labels, got, before+1)
			}
			for _, m := range fams["gpulayer_http_request_duration_seconds"].GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "route" && strings.Contains(l.GetValue(), "j-does-not-exist") {
						t.Errorf("a raw path is a route label: %q", l.GetValue())
					}
				}
			}
			if value(fams, "gpulayer_http_responses_total", map[string]string{"code": c.code}) < 1 {
				t.Errorf("no gpulayer_http_responses_total{code=%q}", c.code)
			}
		})
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestMetricsAuthRefusedByKind: each kind of refused credential counts
// once under its own kind.
func TestMetricsAuthRefusedByKind(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	admin := h.Client(t, h.AdminToken)
	revoked, err := admin.CreateToken(t.Context(), api.CreateTokenRequest{Kind: api.TokenKindClient, Name: "metrics-revoked", Roles: []string{auth.RoleRead}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RevokeToken(t.Context(), revoked.ID); err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(h.AdminToken, "_")
	unknown := parts[0] + "_" + parts[1] + "_" + strings.Repeat("0", len(parts[2]))
	reader := mintClient(t, h, "metrics-read", auth.RoleRead)
	cases := []struct {
		kind, method, path, token string
		header                    map[string]string
	}{
		{"missing", "GET", "/v1/jobs", "", nil},
		{"malformed", "GET", "/v1/jobs", "", map[string]string{"Authorization": "Basic YWRtaW46YWRtaW4="}},
		{"malformed", "GET", "/v1/jobs", "not-a-token", nil},
		{"unknown", "GET", "/v1/jobs", unknown, nil},
		{"revoked", "GET", "/v1/jobs", revoked.Token, nil},
		{"wrong_kind", "GET", "/v1/jobs", h.JoinToken, nil},
		{"wrong_role", "GET", "/v1/tokens", reader, nil},
	}
	for _, c := range cases {
		t.Run(c.kind, func(t *testing.T) {
			labels := map[string]string{"kind": c.kind}
			before := value(scrape(t, h.URL), "gpulayer_auth_refused_total", labels)
			r := call(t, h.URL, c.method, c.path, c.token, nil, c.header)
			if r.status != http.StatusUnauthorized && r.status != http.StatusForbidden {
				t.Fatalf("%s %s: %d %s, want a refusal", c.method, c.path, r.status, r.raw)
			}
			if got := value(scrape(t, h.URL), "gpulayer_auth_refused_total", labels); got != before+1 {
				t.Errorf("gpulayer_auth_refused_total{kind=%q}: %v, want %v", c.kind, got, before+1)
			}
		})
	}
}

// TestMetricsRaftAndState: Raft's own metrics (through go-metrics, under
// the names telemetry gives them), the node's term and role, and the
// state's counts, queue depth by executor and pending tasks among them,
// are served.
func TestMetricsRaftAndState(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	admin := h.Client(t, h.AdminToken)
	submitted := map[string]int{"exec": 3, "metrics-other": 2}
	for executor, n := range submitted {
		for range n {
			if _, err := admin.SubmitJob(t.Context(), api.JobSpec{Executor: executor, Config: []byte(`{"command":"true"}`)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	fams := scrape(t, h.URL)
	for _, name := range []string{"gpulayer_raft_commit_duration_seconds", "gpulayer_raft_apply_total", "gpulayer_raft_fsm_apply_duration_seconds", "gpulayer_raft_state_changes_total", "go_goroutines"} {
		if fams[name] == nil {
			t.Errorf("no %s in /metrics", name)
		}
	}
	checks := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"gpulayer_queue_depth", map[string]string{"executor": "exec"}, 3},
		{"gpulayer_queue_depth", map[string]string{"executor": "metrics-other"}, 2},
		{"gpulayer_tasks", map[string]string{"state": "pending"}, 5},
		{"gpulayer_tasks_pending", nil, 5},
		{"gpulayer_jobs", nil, 5},
		{"gpulayer_leases_held", nil, 0},
		{"gpulayer_is_leader", nil, 1},
		{"gpulayer_raft_state", map[string]string{"state": "leader"}, 1},
		{"gpulayer_raft_state", map[string]string{"state": "follower"}, 0},
	}
	for _, c := range checks {
		if metricOf(fams, c.name, c.labels) == nil {
			t.Errorf("no %s%v in /metrics", c.name, c.labels)
			continue
		}
		if got := value(fams, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if term := value(fams, "gpulayer_raft_term", nil); term < 1 {
		t.Errorf("gpulayer_raft_term = %v, want at least 1", term)
	}
}

// TestMetricsTwoCoordinatorsInOneProcess: go-metrics' global is shared by
// the process; each coordinator still serves its own registry with it,
// and neither panics on registration.
func TestMetricsTwoCoordinatorsInOneProcess(t *testing.T) {
	a := coordinatortest.Start(t, coordinatortest.Options{})
	b := coordinatortest.Start(t, coordinatortest.Options{})
	call(t, a.URL, "GET", "/v1/jobs", a.AdminToken, nil, nil)
	for _, h := range []*coordinatortest.Harness{a, b} {
		fams := scrape(t, h.URL)
		for _, name := range []string{"gpulayer_auth_refused_total", "gpulayer_jobs", "gpulayer_raft_term", "gpulayer_raft_commit_duration_seconds"} {
			if fams[name] == nil {
				t.Errorf("%s: no %s", h.URL, name)
			}
		}
	}
	listA := value(scrape(t, a.URL), "gpulayer_http_request_duration_seconds", map[string]string{"route": "GET /v1/jobs"})
	listB := value(scrape(t, b.URL), "gpulayer_http_request_duration_seconds", map[string]string{"route": "GET /v1/jobs"})
	if listA != 1 || listB != 0 {
		t.Errorf("GET /v1/jobs counted %v on a and %v on b, want 1 and 0: the registries are not the coordinators' own", listA, listB)
	}
}
