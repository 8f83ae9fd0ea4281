package api

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParseAffinity(t *testing.T) {
	cases := []struct {
		name, raw string
		rules     int
		bad       string // a word the error holds; "" for accepted
	}{
		{"absent", ``, 0, ""},
		{"null", `null`, 0, ""},
		{"empty list", `[]`, 0, ""},
		{"one of each", `[{"worker":"w1","weight":10},{"group":"g","weight":-5},{"label":"zone","value":"a","required":true},{"label":"nvlink","required":true,"weight":-1}]`, 4, ""},
		{"an object", `{"zone":"a"}`, 0, "array"},
		{"unknown field", `[{"label":"zone","weight":1,"op":"in"}]`, 0, "unknown field"},
		{"no selector", `[{"weight":5}]`, 0, "exactly one"},
		{"two selectors", `[{"worker":"w","group":"g","weight":5}]`, 0, "exactly one"},
		{"value without label", `[{"worker":"w","value":"a","weight":5}]`, 0, "value goes with label"},
		{"soft without weight", `[{"worker":"w"}]`, 0, "weight other than 0"},
		{"weight too high", `[{"worker":"w","weight":101}]`, 0, "between -100 and 100"},
		{"weight too low", `[{"worker":"w","weight":-101}]`, 0, "between -100 and 100"},
		{"long label", `[{"label":"` + strings.Repeat("k", MaxLabelBytes+1) + `","weight":1}]`, 0, "at most"},
		{"long id", `[{"group":"` + strings.Repeat("g", MaxIDBytes+1) + `","weight":1}]`, 0, "at most"},
		{"too many", `[` + strings.TrimSuffix(strings.Repeat(`{"worker":"w","weight":1},`, MaxAffinityRules+1), ",") + `]`, 0, "at most 16"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rules, err := ParseAffinity(json.RawMessage(c.raw))
			if c.bad == "" {
				if err != nil || len(rules) != c.rules {
					t.Fatalf("%d rules, %v; want %d", len(rules), err, c.rules)
				}
				return
			}
			if !errors.Is(err, ErrAffinity) || !strings.Contains(err.Error(), c.bad) {
				t.Fatalf("error %v, want one about %q", err, c.bad)
			}
		})
	}
}
