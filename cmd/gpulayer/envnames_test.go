package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// -o/--output (a format) and job submit's --output (a glob) share a flag
// name but not a variable: GPULAYER_OUTPUT=json once made submit upload a
// file named json.
func TestOutputVariablesAreSeparate(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		cmd  func() *cobra.Command
		want string
	}{
		{"GPULAYER_OUTPUT is not a glob", map[string]string{"GPULAYER_OUTPUT": "json"}, jobSubmitCmd, "[]"},
		{"GPULAYER_OUTPUT is still the format", map[string]string{"GPULAYER_OUTPUT": "json"}, jobListCmd, "json"},
		{"GPULAYER_OUTPUT_FORMAT is the format", map[string]string{"GPULAYER_OUTPUT_FORMAT": "wide"}, jobListCmd, "wide"},
		{"GPULAYER_OUTPUT_FORMAT wins over GPULAYER_OUTPUT", map[string]string{"GPULAYER_OUTPUT_FORMAT": "wide", "GPULAYER_OUTPUT": "json"}, jobListCmd, "wide"},
		{"GPULAYER_OUTPUT_GLOB is the glob", map[string]string{"GPULAYER_OUTPUT_GLOB": "results/*"}, jobSubmitCmd, "[results/*]"},
		{"GPULAYER_OUTPUT_GLOB is not the format", map[string]string{"GPULAYER_OUTPUT_GLOB": "json"}, jobListCmd, "table"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, v := range []string{"GPULAYER_OUTPUT", "GPULAYER_OUTPUT_FORMAT", "GPULAYER_OUTPUT_GLOB"} {
				t.Setenv(v, tc.env[v])
			}
			cmd := tc.cmd()
			if err := parsed(t, cmd); err != nil {
				t.Fatal(err)
			}
			if got := flagValue(t, cmd, "output"); got != tc.want {
				t.Errorf("--output = %q, want %q", got, tc.want)
			}
		})
	}
}

// Each flag's help names the variables it reads.
func TestOutputVariablesDocumented(t *testing.T) {
	root := newRootCmd()
	for _, c := range []struct {
		path []string
		want string
	}{
		{[]string{"job", "submit"}, "[$GPULAYER_OUTPUT_GLOB]"},
		{[]string{"job", "list"}, "[$GPULAYER_OUTPUT_FORMAT, $GPULAYER_OUTPUT]"},
	} {
		cmd, _, err := root.Find(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if u := cmd.Flags().Lookup("output").Usage; !strings.Contains(u, c.want) {
			t.Errorf("%v --output usage %q lacks %q", c.path, u, c.want)
		}
	}
}
