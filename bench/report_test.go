package main

import (
	"strings"
	"testing"
)

// The summary line a run ends with: a quick run judges no target, and
// says so rather than listing "missed" scenarios; a full run counts them.
func TestReportSummary(t *testing.T) {
	rows := []Row{
		{Scenario: "S1", Metric: "rate", Value: "900/s", Target: "2,000/s", Met: "no"},
		{Scenario: "S2", Metric: "p99", Value: "3 ms", Target: "≤ 20 ms", Met: "yes"},
		{Scenario: "E4", Metric: "rate", Value: "10/s", Target: "≥ 1000", Met: "no"},
	}
	tests := []struct {
		name      string
		quick     bool
		want      []string
		forbidden []string
	}{
		{"quick", true, []string{"bench quick: ok", "targets not judged"}, []string{"missed", "met 1/3", "S1"}},
		{"full", false, []string{"bench full: ok", "targets met 1/3", "(missed: S1,E4)"}, []string{"not judged"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &Report{Quick: tc.quick}
			for _, row := range rows {
				r.add(row)
			}
			got := r.summary()
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("summary %q lacks %q", got, w)
				}
			}
			for _, f := range tc.forbidden {
				if strings.Contains(got, f) {
					t.Errorf("summary %q has %q", got, f)
				}
			}
			for _, row := range r.Rows {
				if tc.quick && row.Met != "" {
					t.Errorf("quick run judged %s: met %q", row.Scenario, row.Met)
				}
			}
		})
	}
}
