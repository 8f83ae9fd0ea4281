package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An unknown --log-level or --log-format, from the flag, its variable or a
// config file, is a usage error (exit 2) before anything starts, never a
// quiet fall back to info.
func TestUnknownLogLevelIsAUsageError(t *testing.T) {
	cases := []struct {
		name   string
		env    []string
		args   []string
		config string // written to a file given with --config
		want   string
	}{
		{"coordinator flag", nil, []string{"coordinator", "run", "--log-level=bogus"}, "", `unknown log level "bogus"`},
		{"agent flag", nil, []string{"agent", "run", "--log-level", "verbose"}, "", `unknown log level "verbose"`},
		{"dev flag", nil, []string{"dev", "--log-level", "trace"}, "", `unknown log level "trace"`},
		{"variable", []string{"GPULAYER_LOG_LEVEL=bogus"}, []string{"coordinator", "run"}, "", "GPULAYER_LOG_LEVEL"},
		{"config file", nil, []string{"agent", "run"}, "log-level = \"bogus\"\n", "log-level"},
		{"format", nil, []string{"coordinator", "run", "--log-format", "xml"}, "", `unknown log format "xml"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{}, tc.args...)
			if tc.config != "" {
				file := filepath.Join(t.TempDir(), "gpulayer.toml")
				if err := os.WriteFile(file, []byte(tc.config), 0o600); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--config", file)
			}
			r := run(t, tc.env, args...)
			if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("gpulayer %q: exit %d, stderr %q; want exit %d and %q", args, r.code, r.stderr, exitUsage, tc.want)
			}
		})
	}
}

// The level names are taken in any case, as before.
func TestLogLevelNames(t *testing.T) {
	for _, level := range []string{"debug", "INFO", "Warn", "error"} {
		var lf logFlags
		if err := lf.level.Set(level); err != nil {
			t.Errorf("--log-level %s: %v", level, err)
		}
		if got := lf.level.String(); got != strings.ToLower(level) {
			t.Errorf("--log-level %s reads back as %q", level, got)
		}
	}
}
