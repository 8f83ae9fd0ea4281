package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// --parallelism and --depends-on build the spec's fields, refusing what
// the coordinator would; job status shows them back.
func TestFlowFlags(t *testing.T) {
	two := 2
	cases := []struct {
		name  string
		flags flowFlags
		count int
		gang  bool
		want  api.JobSpec
		err   string
	}{
		{name: "none", count: 3},
		{name: "parallelism", flags: flowFlags{parallelism: 2}, count: 3, want: api.JobSpec{Parallelism: &two}},
		{name: "gang at its count", flags: flowFlags{parallelism: 2}, count: 2, gang: true, want: api.JobSpec{Parallelism: &two}},
		{name: "condition defaults to succeeded", flags: flowFlags{dependsOn: []string{"j1", "j2:failed", "j3:finished"}},
			want: api.JobSpec{DependsOn: []api.Dependency{{Job: "j1", Condition: "succeeded"}, {Job: "j2", Condition: "failed"}, {Job: "j3", Condition: "finished"}}}},
		{name: "parallelism over count", flags: flowFlags{parallelism: 4}, count: 3, err: "--parallelism 4: give 1 to --count (3)"},
		{name: "parallelism negative", flags: flowFlags{parallelism: -1}, count: 3, err: "--parallelism -1"},
		{name: "gang split", flags: flowFlags{parallelism: 1}, count: 2, gang: true, err: "a gang runs whole"},
		{name: "bad condition", flags: flowFlags{dependsOn: []string{"j1:done"}}, err: "succeeded, failed or finished"},
		{name: "no job", flags: flowFlags{dependsOn: []string{":finished"}}, err: "give a job id"},
		{name: "too many", flags: flowFlags{dependsOn: make([]string, api.MaxDependencies+1)}, err: "at most 64"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := api.JobSpec{Count: c.count, Gang: c.gang}
			err := c.flags.apply(&spec)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got %v, want an error with %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(spec.Parallelism, c.want.Parallelism) || !reflect.DeepEqual(spec.DependsOn, c.want.DependsOn) {
				t.Fatalf("parallelism %v depends_on %+v, want %v %+v", spec.Parallelism, spec.DependsOn, c.want.Parallelism, c.want.DependsOn)
			}
		})
	}
	var b strings.Builder
	describeFlow(&b, api.Job{JobSpec: api.JobSpec{Parallelism: &two, DependsOn: []api.Dependency{{Job: "j1", Condition: "finished"}}}})
	if got := b.String(); got != "  parallelism=2  depends_on=j1:finished" {
		t.Fatalf("job status shows %q", got)
	}
}
