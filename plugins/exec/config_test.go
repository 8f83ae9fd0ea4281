package exec

import (
	"errors"
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

func TestTaskDir(t *testing.T) {
	for _, tc := range []struct{ cfg, work, want string }{
		{"", "/w", "/w"},
		{"sub", "/w", "/w/sub"},
		{"/abs", "/w", "/abs"},
		{"sub", "", "sub"},
	} {
		if got := taskDir(tc.cfg, tc.work); got != tc.want {
			t.Errorf("taskDir(%q, %q) = %q, want %q", tc.cfg, tc.work, got, tc.want)
		}
	}
}
