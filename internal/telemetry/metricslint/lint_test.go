package metricslint

import (
	"slices"
	"strings"
	"testing"
)

// Lint reports what promtool reports, and help text equal to the name;
// a well-formed page reports nothing.
func TestLint(t *testing.T) {
	cases := []struct {
		name, page string
		want       []string
	}{
		{"clean", "# HELP gpulayer_x_total Things done.\n# TYPE gpulayer_x_total counter\ngpulayer_x_total 1\n", nil},
		{"counter without _total", "# HELP raft_apply Entries applied.\n# TYPE raft_apply counter\nraft_apply 1\n",
			[]string{`raft_apply counter metrics should have "_total" suffix`}},
		{"camelCase", "# HELP raft_commitTime Commit time.\n# TYPE raft_commitTime gauge\nraft_commitTime 1\n",
			[]string{"raft_commitTime metric names should be written in 'snake_case' not 'camelCase'"}},
		{"help is the name", "# HELP gpulayer_peers gpulayer_peers\n# TYPE gpulayer_peers gauge\ngpulayer_peers 3\n",
			[]string{"gpulayer_peers " + ErrHelpIsName.Error()}},
		{"milliseconds", "# HELP gpulayer_wait_milliseconds Wait.\n# TYPE gpulayer_wait_milliseconds gauge\ngpulayer_wait_milliseconds 3\n",
			[]string{`gpulayer_wait_milliseconds use base unit "seconds" instead of "milliseconds"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Lint(strings.NewReader(c.page))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("Lint = %q, want %q", got, c.want)
			}
		})
	}
}

// A page that does not parse is an error, not a clean bill.
func TestLintBadPage(t *testing.T) {
	if _, err := Lint(strings.NewReader("gpulayer_x{ 1\n")); err == nil {
		t.Fatal("no error for a page that does not parse")
	}
}
