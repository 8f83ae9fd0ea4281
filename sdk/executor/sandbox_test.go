package executor

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestTaskSandbox(t *testing.T) {
	full := Sandbox{Hide: []string{"/var/lib/gpulayer"}, Keep: []string{"/tmp/nvidia-mps"}, MemoryBytes: 1 << 30, CPUMillis: 1500, Pids: 64, Network: SandboxNetworkIsolated}
	for _, tc := range []struct {
		name string
		env  map[string]string
		want Sandbox
		ok   bool
		bad  bool
	}{
		{"absent", map[string]string{}, Sandbox{}, false, false},
		{"round trip", map[string]string{EnvSandbox: full.Encode()}, full, true, false},
		{"disable", map[string]string{EnvSandbox: `{"disable":true}`}, Sandbox{Disable: true}, true, false},
		{"not json", map[string]string{EnvSandbox: "hide=/x"}, Sandbox{}, false, true},
		{"unknown field", map[string]string{EnvSandbox: `{"hyde":["/x"]}`}, Sandbox{}, false, true},
		{"relative path", map[string]string{EnvSandbox: `{"hide":["var/lib"]}`}, Sandbox{}, false, true},
		{"root", map[string]string{EnvSandbox: `{"keep":["/"]}`}, Sandbox{}, false, true},
		{"negative memory", map[string]string{EnvSandbox: `{"memory_bytes":-1}`}, Sandbox{}, false, true},
		{"host network", map[string]string{EnvSandbox: `{"network":"host"}`}, Sandbox{Network: SandboxNetworkHost}, true, false},
		{"unknown network", map[string]string{EnvSandbox: `{"network":"bridge"}`}, Sandbox{}, false, true},
		{"owner", map[string]string{EnvSandbox: `{"owner":"agent-0a1b"}`}, Sandbox{Owner: "agent-0a1b"}, true, false},
		{"owner with a dot", map[string]string{EnvSandbox: `{"owner":"a.b"}`}, Sandbox{}, false, true},
		{"owner with a slash", map[string]string{EnvSandbox: `{"owner":"../x"}`}, Sandbox{}, false, true},
		{"owner too long", map[string]string{EnvSandbox: `{"owner":"` + strings.Repeat("a", MaxSandboxOwner+1) + `"}`}, Sandbox{}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := TaskSandbox(Task{Env: tc.env})
			if tc.bad != errors.Is(err, ErrBadSandbox) || (err != nil && !tc.bad) {
				t.Fatalf("err = %v, want bad=%v", err, tc.bad)
			}
			if ok != tc.ok || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("TaskSandbox = %+v, %v; want %+v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}
