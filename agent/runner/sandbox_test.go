package runner

import (
	"reflect"
	"testing"

	"github.com/gpulayer/gpulayer/sdk/executor"
)

// The runner asks every task's sandbox to hide the work root besides what
// it is told to hide, to keep a task's MPS pipe directory reachable, and
// to hold the limits it is given; or for none when told so.
func TestSandboxAskedOfTheExecutor(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  SandboxConfig
		mps  string
		want executor.Sandbox
	}{
		{"defaults", SandboxConfig{}, "", executor.Sandbox{Hide: []string{"/work"}}},
		{"hide, keep and limits", SandboxConfig{Hide: []string{"/var/lib/gpulayer", "/etc/gpulayer"}, Keep: []string{"/tmp/data"}, MemoryBytes: 1 << 30, CPUMillis: 2000, Pids: 512},
			"/tmp/nvidia-mps", executor.Sandbox{Hide: []string{"/var/lib/gpulayer", "/etc/gpulayer", "/work"}, Keep: []string{"/tmp/data", "/tmp/nvidia-mps"}, MemoryBytes: 1 << 30, CPUMillis: 2000, Pids: 512}},
		{"disabled", SandboxConfig{Disable: true, Hide: []string{"/x"}}, "/tmp/nvidia-mps", executor.Sandbox{Disable: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := New(Config{WorkRoot: "/work", Sandbox: tc.cfg})
			got := r.sandbox(tc.mps)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("sandbox = %+v, want %+v", got, tc.want)
			}
			// Asked twice, the lists do not grow into each other.
			if again := r.sandbox(tc.mps); !reflect.DeepEqual(again, tc.want) {
				t.Errorf("second ask = %+v, want %+v", again, tc.want)
			}
		})
	}
}
