package main

import (
	"maps"
	"strings"
	"testing"
)

func TestParseLabels(t *testing.T) {
	for _, tc := range []struct {
		flags []string
		want  map[string]string
		bad   bool
	}{
		{flags: nil, want: nil},
		{flags: []string{"gpulayer.io/rack=r1", "gpulayer.io/switch=leaf-3", "zone="}, want: map[string]string{"gpulayer.io/rack": "r1", "gpulayer.io/switch": "leaf-3", "zone": ""}},
		{flags: []string{"a=b=c"}, want: map[string]string{"a": "b=c"}},
		{flags: []string{"novalue"}, bad: true},
		{flags: []string{"=v"}, bad: true},
		{flags: []string{"k=1", "k=2"}, bad: true},
		{flags: []string{strings.Repeat("k", 129) + "=v"}, bad: true},
		{flags: []string{"k=" + strings.Repeat("v", 257)}, bad: true},
		{flags: strings.Fields(strings.Repeat("k=v ", 65)), bad: true},
	} {
		got, err := parseLabels(tc.flags)
		if tc.bad != (err != nil) || !tc.bad && !maps.Equal(got, tc.want) {
			t.Errorf("parseLabels(%q) = %v, %v", tc.flags, got, err)
		}
	}
}
