package main

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// metricName finds the metric names a PromQL expression reads.
var metricName = regexp.MustCompile(`\b(?:gpulayer|raft)_[A-Za-z_]+`)

// The Grafana dashboard in deploy/ is valid JSON for a current Grafana,
// has a Prometheus data source variable, and reads only metrics that
// docs/metrics.md documents.
func TestGrafanaDashboard(t *testing.T) {
	raw, err := os.ReadFile("../../deploy/grafana/gpulayer-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		SchemaVersion int `json:"schemaVersion"`
		Templating    struct {
			List []struct{ Name, Type, Query any }
		}
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	if dash.SchemaVersion < 36 {
		t.Errorf("schemaVersion %d, want a current one", dash.SchemaVersion)
	}
	if len(dash.Templating.List) == 0 || dash.Templating.List[0].Type != "datasource" || dash.Templating.List[0].Query != "prometheus" {
		t.Errorf("the first variable is not a Prometheus data source: %+v", dash.Templating.List)
	}
	exprs := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			exprs++
			for _, name := range metricName.FindAllString(tg.Expr, -1) {
				base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_count"), "_sum")
				if !strings.Contains(string(doc), "`"+base+"`") {
					t.Errorf("panel %q reads %s, which docs/metrics.md does not document", p.Title, name)
				}
			}
		}
	}
	if exprs < 15 {
		t.Errorf("only %d queries in the dashboard", exprs)
	}
}
