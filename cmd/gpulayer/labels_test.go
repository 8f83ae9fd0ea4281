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

// --fake-gpu-faults serves only a fake set; a bad --label is refused
// before anything starts. Both are usage errors.
func TestAgentFlagsRefusedBeforeStart(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct {
		args []string
		says string
	}{
		"faults without a fake set": {[]string{"--fake-gpu-faults", dir + "/faults"}, "--fake-gpu-faults needs --fake-gpus"},
		"faults with none":          {[]string{"--fake-gpus", "none", "--fake-gpu-faults", dir + "/faults"}, "--fake-gpu-faults needs --fake-gpus"},
		"a label without a value":   {[]string{"--fake-gpus", "none", "--label", "rack"}, "give KEY=VALUE"},
	} {
		r := run(t, []string{"GPULAYER_JOIN_TOKEN=glj_x_y"}, append([]string{"agent", "run", "--coordinator", "http://127.0.0.1:1", "--data-dir", dir, "--allow-shared-user-tasks"}, c.args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.says) {
			t.Errorf("%s: exit %d, want %d saying %q (%s)", name, r.code, exitUsage, c.says, r.stderr)
		}
	}
}
