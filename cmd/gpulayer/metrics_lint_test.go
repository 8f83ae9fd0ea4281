package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/internal/telemetry"
	"github.com/gpulayer/gpulayer/internal/telemetry/metricslint"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// getPage reads url's /metrics page as it is served.
func getPage(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s/metrics: %s %v", url, resp.Status, err)
	}
	return raw
}

func parsePage(t *testing.T, raw []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// sum adds the gauge values of every series of a family.
func sum(f *dto.MetricFamily) float64 {
	var v float64
	for _, m := range f.GetMetric() {
		v += m.GetGauge().GetValue()
	}
	return v
}

// A real three-coordinator cluster and a real agent (fake GPUs) that has
// run a job: every family on each coordinator's /metrics and on the
// agent's passes promtool's rules (promlint, the same checks) with
// nothing reported, each coordinator counts the agent's GPUs as free, and
// every metric the Grafana dashboard reads is among those served.
func TestMetricsLintCleanAndDashboardExported(t *testing.T) {
	c := coordinatortest.StartCluster(t, 3, coordinatortest.Options{})
	leader := c.WaitLeader(30 * time.Second)
	a := runAgent(t, &coordinatortest.Harness{URL: leader.URL, JoinToken: c.JoinToken}, t.TempDir(), "linted", 63150,
		"--fake-gpus", "dgxh100", "--metrics-addr", "127.0.0.1:0")
	agentURL := agentMetricsURL(t, a)
	if _, err := c.Client(c.AdminToken).SubmitJob(t.Context(), api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`), MaxAttempts: 1}); err != nil {
		t.Fatal(err)
	}
	coordinatortest.WaitFor(t, 90*time.Second, "the job to run on the agent and its GPUs to be free everywhere", func() bool {
		if n, _ := sample(parsePage(t, getPage(t, agentURL)), "gpulayer_agent_task_duration_seconds", nil); n != 1 {
			return false
		}
		for _, n := range c.Nodes {
			fams := parsePage(t, getPage(t, n.URL))
			if sum(fams["gpulayer_gpus_free"]) != 8 || sum(fams["gpulayer_tasks_pending"]) != 0 {
				return false
			}
		}
		return true
	})

	// Some of Raft's measurements come at intervals (the leader's
	// contact with its followers, every lease timeout): scrape until
	// every name the dashboard reads is served, or a deadline.
	queries := dashboardQueries(t)
	var pages map[string][]byte
	var exported map[string]bool
	deadline := time.Now().Add(30 * time.Second)
	for {
		pages, exported = scrapeAll(t, agentURL, c)
		if missingFrom(exported, queries) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond) // poll interval, not synchronisation
	}
	for who, raw := range pages {
		problems, err := metricslint.Lint(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("%s: %v", who, err)
		}
		for _, p := range problems {
			t.Errorf("%s /metrics: %s", who, p)
		}
		for name, f := range parsePage(t, raw) {
			if strings.Contains(f.GetHelp(), telemetry.UntranslatedHelp) {
				t.Errorf("%s /metrics: %s is a Raft key internal/telemetry/raftnames.go does not name: %s", who, name, f.GetHelp())
			}
		}
	}
	fams := parsePage(t, pages["coordinator c1"])
	if sum(fams["gpulayer_gpus_allocated"]) != 0 || sum(fams["gpulayer_gpus_unhealthy"]) != 0 {
		t.Errorf("GPUs allocated %v, unhealthy %v; want 0 and 0 with no task running", sum(fams["gpulayer_gpus_allocated"]), sum(fams["gpulayer_gpus_unhealthy"]))
	}

	read := 0
	for where, expr := range queries {
		for _, name := range promqlMetricNames(expr) {
			read++
			if !exported[name] {
				t.Errorf("dashboard %s reads %s, which no coordinator or agent serves", where, name)
			}
		}
	}
	if read < 30 {
		t.Errorf("only %d metric reads found in the dashboard", read)
	}
}

// scrapeAll reads the agent's and every coordinator's page, and the
// names they serve: each family's, and a histogram's or summary's series
// names (_bucket, _count, _sum).
func scrapeAll(t *testing.T, agentURL string, c *coordinatortest.Cluster) (map[string][]byte, map[string]bool) {
	t.Helper()
	pages := map[string][]byte{"agent": getPage(t, agentURL)}
	for _, n := range c.Nodes {
		pages["coordinator "+n.ID] = getPage(t, n.URL)
	}
	exported := map[string]bool{}
	for _, raw := range pages {
		for name, f := range parsePage(t, raw) {
			exported[name] = true
			switch f.GetType() {
			case dto.MetricType_HISTOGRAM:
				exported[name+"_bucket"], exported[name+"_count"], exported[name+"_sum"] = true, true, true
			case dto.MetricType_SUMMARY:
				exported[name+"_count"], exported[name+"_sum"] = true, true
			}
		}
	}
	return pages, exported
}

// missingFrom counts the names queries read that exported lacks.
func missingFrom(exported map[string]bool, queries map[string]string) int {
	n := 0
	for _, expr := range queries {
		for _, name := range promqlMetricNames(expr) {
			if !exported[name] {
				n++
			}
		}
	}
	return n
}

// dashboardQueries are the PromQL expressions of the Grafana dashboard in
// deploy/: each panel target's and each query variable's, keyed by where
// they are.
func dashboardQueries(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile("../../deploy/grafana/gpulayer-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Templating struct {
			List []struct {
				Name, Type string
				Query      json.RawMessage
			}
		}
		Panels []struct {
			Title   string
			Targets []struct{ RefID, Expr string }
		}
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	out := map[string]string{}
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			out["panel "+p.Title+" "+tg.RefID] = tg.Expr
		}
	}
	for _, v := range dash.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct{ Query string }
		if err := json.Unmarshal(v.Query, &q); err != nil || q.Query == "" {
			t.Fatalf("variable %s: query %s is not {\"query\": ...}", v.Name, v.Query)
		}
		out["variable "+v.Name] = strings.TrimSpace(q.Query)
	}
	return out
}
