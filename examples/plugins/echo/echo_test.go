package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/sdk/executor"
	"github.com/gpulayer/gpulayer/sdk/executor/executortest"
)

func config(c map[string]any) []byte {
	b, err := json.Marshal(c)
	if err != nil {
		panic(err)
	}
	return b
}

// TestConformance is how a plugin author checks an executor against the
// contract: in-process and over go-plugin's gRPC transport.
func TestConformance(t *testing.T) {
	executortest.Run(t, executortest.Spec{
		New: func() executor.Executor { return New() },
		Print: func(lines []string) []byte {
			return config(map[string]any{"message": strings.Join(lines, "\n")})
		},
		Block:    func() []byte { return config(map[string]any{"message": "tick", "repeat": -1, "interval": "20ms"}) },
		Exit:     func(code int) []byte { return config(map[string]any{"message": "bye", "exit_code": code}) },
		PrintEnv: func(key string) []byte { return config(map[string]any{"message": "${" + key + "}"}) },
		Invalid:  []byte(`{"message": "hi", "repeats": 2}`),
	})
}

func TestRepeat(t *testing.T) {
	e := New()
	task := executortest.NewTask(t, config(map[string]any{"message": "hi ${WHO}", "repeat": 3}))
	task.Env["WHO"] = "there"
	if err := e.Start(t.Context(), task); err != nil {
		t.Fatal(err)
	}
	out, err := executortest.Collect(t.Context(), e, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Stdout(); got != "hi there\nhi there\nhi there\n" {
		t.Errorf("stdout %q", got)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, raw := range []string{`{"repeat": -2}`, `{"interval": "soon"}`, `{"interval": "-1s"}`, `nope`} {
		if _, _, _, err := parseConfig([]byte(raw)); err == nil {
			t.Errorf("parseConfig(%s) accepted", raw)
		}
	}
}
