package exec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/sdk/executor"
)

func TestParseConfig(t *testing.T) {
	for _, tc := range []struct {
		name, raw, wantErr string
	}{
		{"ok", `{"command": "python3", "args": ["a"], "env": {"K": "V"}, "dir": "d"}`, ""},
		{"minimal", `{"command": "true"}`, ""},
		{"empty", ``, "empty"},
		{"unknown field", `{"command": "true", "cmd": "x"}`, `unknown field "cmd"`},
		{"no command", `{"args": ["x"]}`, `"command" is required`},
		{"blank command", `{"command": "  "}`, `"command" is required`},
		{"trailing data", `{"command": "true"} {"command": "false"}`, "unexpected data"},
		{"not an object", `["true"]`, "exec config"},
		{"bad env name", `{"command": "true", "env": {"A=B": "x"}}`, "bad environment variable name"},
		{"wrong type", `{"command": "true", "args": "x"}`, "exec config"},
		{"absolute dir", `{"command": "true", "dir": "/"}`, "inside the task's directory"},
		{"climbing dir", `{"command": "true", "dir": "../../"}`, "inside the task's directory"},
		{"climbing after descending", `{"command": "true", "dir": "a/../../b"}`, "inside the task's directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseConfig([]byte(tc.raw))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("ParseConfig: %v", err)
				}
				if cfg.Command == "" {
					t.Fatal("command lost")
				}
				return
			}
			if !errors.Is(err, executor.ErrInvalidConfig) {
				t.Fatalf("err = %v, want ErrInvalidConfig", err)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("err = %q, want it to mention %q", err, tc.wantErr)
			}
		})
	}
}

func TestBuildEnv(t *testing.T) {
	base := []string{"A=base", "B=base", "C=base", "PATH=/bin"}
	got := buildEnv(base, map[string]string{"A": "cfg", "B": "cfg"}, map[string]string{"B": "task", "D": "task"})
	want := []string{"C=base", "PATH=/bin", "A=cfg", "B=task", "D=task"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("buildEnv = %v, want %v", got, want)
	}
	if v := lookupEnv(got, "B"); v != "task" {
		t.Errorf("lookupEnv(B) = %q", v)
	}
}

func TestBaseEnvKeepsOnlyTheAllowlist(t *testing.T) {
	got := baseEnv([]string{"PATH=/bin", "LANG=C.UTF-8", "LC_ALL=C", "TZ=UTC", "HOME=/root",
		"GPULAYER_ADMIN_TOKEN=glc_secret", "AWS_SECRET_ACCESS_KEY=x", "PLUGIN_CLIENT_CERT=pem", "LCX=1"})
	want := []string{"PATH=/bin", "LANG=C.UTF-8", "LC_ALL=C", "TZ=UTC"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("baseEnv = %v, want %v", got, want)
	}
}

func TestWorkingDir(t *testing.T) {
	work := t.TempDir()
	for _, d := range []string{"sub/deep", "real"} {
		if err := os.MkdirAll(filepath.Join(work, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"up": "..", "root": "/", "inside": "real"} {
		if err := os.Symlink(target, filepath.Join(work, link)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		dir, want string
		invalid   bool
	}{
		{"", work, false},
		{".", work, false},
		{"sub", filepath.Join(work, "sub"), false},
		{"sub/../sub/deep", filepath.Join(work, "sub", "deep"), false},
		{"inside", filepath.Join(work, "real"), false},
		{"/", "", true},
		{"/etc", "", true},
		{"..", "", true},
		{"../../", "", true},
		{"a/../../b", "", true},
		{"up", "", true},
		{"root", "", true},
		{"root/etc", "", true},
	} {
		got, err := workingDir(tc.dir, work)
		if tc.invalid {
			if !errors.Is(err, executor.ErrInvalidConfig) {
				t.Errorf("workingDir(%q) = %q, %v; want ErrInvalidConfig", tc.dir, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("workingDir(%q) = %q, %v; want %q", tc.dir, got, err, tc.want)
		}
	}
	if _, err := workingDir("sub", ""); !errors.Is(err, executor.ErrInvalidConfig) {
		t.Errorf("a dir without a work dir: %v, want ErrInvalidConfig", err)
	}
}
