package main

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

var (
	promqlStrings  = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`)
	promqlMatchers = regexp.MustCompile(`\{[^}]*\}`)
	promqlRanges   = regexp.MustCompile(`\[[^\]]*\]`)
	promqlGrouping = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promqlWord     = regexp.MustCompile(`\$?[A-Za-z0-9_:.]+(\s*\()?`)
	// promqlKeywords are PromQL words that are neither functions (those
	// are followed by "(") nor metric names.
	promqlKeywords = map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "group_left": true,
		"group_right": true, "bool": true, "offset": true, "and": true, "or": true, "unless": true, "inf": true, "nan": true}
)

// promqlMetricNames lists, sorted and once each, the metric names a
// PromQL expression (as a Grafana panel holds it, with $variables)
// reads: the identifiers left once strings, label matchers, ranges and
// grouping clauses are taken out, less functions, keywords and
// variables. Grafana's label_values(metric, label) reads metric.
func promqlMetricNames(expr string) []string {
	if rest, ok := strings.CutPrefix(strings.TrimSpace(expr), "label_values("); ok {
		name, _, _ := strings.Cut(rest, ",")
		expr = strings.TrimSuffix(name, ")")
	}
	expr = promqlStrings.ReplaceAllString(expr, " ")
	expr = promqlMatchers.ReplaceAllString(expr, " ")
	expr = promqlRanges.ReplaceAllString(expr, " ")
	expr = promqlGrouping.ReplaceAllString(expr, " ")
	var names []string
	for _, m := range promqlWord.FindAllStringSubmatch(expr, -1) {
		word := m[0]
		if m[1] != "" || strings.ContainsAny(word[:1], "$.0123456789") || promqlKeywords[strings.ToLower(word)] {
			continue // a function call, a variable, a number or duration, a keyword
		}
		if !slices.Contains(names, word) {
			names = append(names, word)
		}
	}
	slices.Sort(names)
	return names
}

func TestPromqlMetricNames(t *testing.T) {
	cases := []struct {
		expr string
		want []string
	}{
		{`max by (instance) (gpulayer_is_leader{instance=~"$instance"})`, []string{"gpulayer_is_leader"}},
		{`histogram_quantile(0.99, sum by (le, route) (rate(gpulayer_http_request_duration_seconds_bucket{instance=~"$instance", route!~".*/acquire|GET /v1/jobs/.*/logs"}[$__rate_interval])))`,
			[]string{"gpulayer_http_request_duration_seconds_bucket"}},
		{`sum(increase(gpulayer_raft_state_changes_total{state="candidate"}[1h])) / on (instance) group_left max(up) > bool 0`,
			[]string{"gpulayer_raft_state_changes_total", "up"}},
		{`gpulayer_agent_gpu_health{state!="healthy"} == 1 or vector(0)`, []string{"gpulayer_agent_gpu_health"}},
		{`label_values(gpulayer_agent_tasks_running, instance)`, []string{"gpulayer_agent_tasks_running"}},
		{`rate(a_total[5m]) + rate(a_total[5m]) offset 1h`, []string{"a_total"}},
		{`$variable`, nil},
	}
	for _, c := range cases {
		if got := promqlMetricNames(c.expr); !slices.Equal(got, c.want) {
			t.Errorf("promqlMetricNames(%q) = %q, want %q", c.expr, got, c.want)
		}
	}
}
