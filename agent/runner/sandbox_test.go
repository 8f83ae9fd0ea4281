package runner

import (
	"reflect"
	"testing"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/executor"
)

// The runner asks every task's sandbox to hide the work root besides what
// it is told to hide, to keep a task's MPS pipe directory reachable, and
// to hold the limits it is given, the job's own included (the tighter of
// the agent's and the job's); or for none when told so.
func TestSandboxAskedOfTheExecutor(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   SandboxConfig
		mps   string
		res   *api.Resources
		fence []string // what FenceDevices answers
		want  executor.Sandbox
	}{
		{"defaults", SandboxConfig{}, "", nil, nil, executor.Sandbox{Hide: []string{"/work"}}},
		{"hide, keep and limits", SandboxConfig{Hide: []string{"/var/lib/gpulayer", "/etc/gpulayer"}, Keep: []string{"/tmp/data"}, MemoryBytes: 1 << 30, CPUMillis: 2000, Pids: 512},
			"/tmp/nvidia-mps", nil, nil, executor.Sandbox{Hide: []string{"/var/lib/gpulayer", "/etc/gpulayer", "/work"}, Keep: []string{"/tmp/data", "/tmp/nvidia-mps"}, MemoryBytes: 1 << 30, CPUMillis: 2000, Pids: 512}},
		{"disabled", SandboxConfig{Disable: true, Hide: []string{"/x"}}, "/tmp/nvidia-mps", nil, []string{"/dev/nvidia1"}, executor.Sandbox{Disable: true}},
		// A job's own limits, alone or under the agent's: the tighter holds.
		{"the job's limits", SandboxConfig{}, "", &api.Resources{MemoryMiB: 512, CPUs: 1.5}, nil,
			executor.Sandbox{Hide: []string{"/work"}, MemoryBytes: 512 << 20, CPUMillis: 1500}},
		{"the job asks less than the agent allows", SandboxConfig{MemoryBytes: 1 << 30, CPUMillis: 2000}, "", &api.Resources{MemoryMiB: 256, CPUs: 0.25}, nil,
			executor.Sandbox{Hide: []string{"/work"}, MemoryBytes: 256 << 20, CPUMillis: 250}},
		{"the job asks more than the agent allows", SandboxConfig{MemoryBytes: 1 << 30, CPUMillis: 2000}, "", &api.Resources{MemoryMiB: 4096, CPUs: 8}, nil,
			executor.Sandbox{Hide: []string{"/work"}, MemoryBytes: 1 << 30, CPUMillis: 2000}},
		{"GPUs only", SandboxConfig{MemoryBytes: 1 << 30}, "", &api.Resources{GPUs: 1}, nil,
			executor.Sandbox{Hide: []string{"/work"}, MemoryBytes: 1 << 30}},
		// The device files of the GPUs not given are hidden.
		{"GPUs not given", SandboxConfig{Hide: []string{"/etc/gpulayer"}}, "", &api.Resources{GPUs: 1}, []string{"/dev/nvidia1", "/dev/nvidia2"},
			executor.Sandbox{Hide: []string{"/etc/gpulayer", "/work", "/dev/nvidia1", "/dev/nvidia2"}}},
		{"disabled, whatever the job asks", SandboxConfig{Disable: true}, "", &api.Resources{MemoryMiB: 512}, nil, executor.Sandbox{Disable: true}},
		{"the agent named", SandboxConfig{Owner: "agent-0a1b"}, "", nil, nil, executor.Sandbox{Hide: []string{"/work"}, Owner: "agent-0a1b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			given := []string{"GPU-0"}
			r := New(Config{WorkRoot: "/work", Sandbox: tc.cfg, FenceDevices: func(g []string) []string {
				if !reflect.DeepEqual(g, given) {
					t.Errorf("FenceDevices asked about %v, want %v", g, given)
				}
				return tc.fence
			}})
			got := r.sandbox(tc.mps, tc.res, given, false)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("sandbox = %+v, want %+v", got, tc.want)
			}
			// Asked twice, the lists do not grow into each other.
			if again := r.sandbox(tc.mps, tc.res, given, false); !reflect.DeepEqual(again, tc.want) {
				t.Errorf("second ask = %+v, want %+v", again, tc.want)
			}
		})
	}
}

// An agent that isolates the network asks it of every task but a gang
// member's (NCCL and the rendezvous need the host's network); one that
// does not, or has no sandbox, asks it of none.
func TestSandboxNetworkAskedOfTheExecutor(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  SandboxConfig
		gang bool
		want string
	}{
		{"host network", SandboxConfig{}, false, ""},
		{"isolated", SandboxConfig{IsolateNetwork: true}, false, executor.SandboxNetworkIsolated},
		{"isolated, gang member", SandboxConfig{IsolateNetwork: true}, true, ""},
		{"disabled sandbox", SandboxConfig{IsolateNetwork: true, Disable: true}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := New(Config{WorkRoot: "/work", Sandbox: tc.cfg})
			if got := r.sandbox("", nil, nil, tc.gang); got.Network != tc.want {
				t.Errorf("network = %q, want %q", got.Network, tc.want)
			}
		})
	}
}
