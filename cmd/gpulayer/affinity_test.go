package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/sdk/api"
)

func TestAffinityFlags(t *testing.T) {
	cases := []struct {
		name string
		f    affinityFlags
		want []api.AffinityRule
		bad  string
	}{
		{"none", affinityFlags{}, nil, ""},
		{"prefer with the default weight", affinityFlags{prefer: []string{"group:a100"}}, []api.AffinityRule{{Group: "a100", Weight: 50}}, ""},
		{"prefer a label value, weighted", affinityFlags{prefer: []string{"label:zone=us-east:80"}}, []api.AffinityRule{{Label: "zone", Value: "us-east", Weight: 80}}, ""},
		{"shun", affinityFlags{prefer: []string{"worker:node3:-40"}}, []api.AffinityRule{{Worker: "node3", Weight: -40}}, ""},
		{"require and avoid", affinityFlags{require: []string{"label:nvlink"}, avoid: []string{"group:flaky"}},
			[]api.AffinityRule{{Label: "nvlink", Weight: 1, Required: true}, {Group: "flaky", Weight: -1, Required: true}}, ""},
		{"no kind", affinityFlags{prefer: []string{"a100"}}, nil, "want worker:ID"},
		{"unknown kind", affinityFlags{require: []string{"rack:7"}}, nil, "not worker, group or label"},
		{"weight not a number", affinityFlags{prefer: []string{"group:g:lots"}}, nil, "not a number"},
		{"weight out of range", affinityFlags{prefer: []string{"group:g:500"}}, nil, "between -100 and 100"},
		{"zero weight", affinityFlags{prefer: []string{"group:g:0"}}, nil, "weight other than 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw, err := c.f.rules()
			if c.bad != "" {
				if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), c.bad) {
					t.Fatalf("error %v, want a usage error about %q", err, c.bad)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []api.AffinityRule
			if raw != nil {
				if err := json.Unmarshal(raw, &got); err != nil {
					t.Fatal(err)
				}
			}
			if len(got) != len(c.want) {
				t.Fatalf("rules %+v, want %+v", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("rule %d: %+v, want %+v", i, got[i], c.want[i])
				}
			}
		})
	}
}

// Against the real binary: a job whose required affinity no worker meets
// shows its rule and why it waits; a bad rule is a usage error.
func TestAffinityThroughTheCLI(t *testing.T) {
	env := startDev(t)
	r := run(t, env, "job", "submit", "--require", "label:zone=nowhere", "--spread", "--", "true")
	if r.code != 0 {
		t.Fatalf("submit: exit %d\n%s", r.code, r.stderr)
	}
	st := run(t, env, "job", "status", strings.TrimSpace(r.stdout))
	for _, want := range []string{"spread", "affinity: require label:zone=nowhere", "waits: no live worker that can run it meets its required affinity (label zone=nowhere)"} {
		if !strings.Contains(st.stdout, want) {
			t.Fatalf("job status lacks %q:\n%s", want, st.stdout)
		}
	}
	if bad := run(t, env, "job", "submit", "--prefer", "zone", "--", "true"); bad.code != exitUsage {
		t.Fatalf("a bad --prefer: exit %d, want %d\n%s", bad.code, exitUsage, bad.stderr)
	}
}
