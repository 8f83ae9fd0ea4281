package main

import (
	"slices"
	"testing"

	"github.com/gpulayer/gpulayer/agent/runner"
)

// The sandbox flags become the agent's request; what is not a size, a
// CPU count or an absolute path is a usage error, and the --config file's
// directory is hidden besides.
func TestAgentSandboxFlags(t *testing.T) {
	cases := []struct {
		name string
		f    agentFlags
		want runner.SandboxConfig
		bad  bool
	}{
		{"defaults", agentFlags{}, runner.SandboxConfig{}, false},
		{"limits", agentFlags{taskMemory: 512, taskCPUs: 1.5, taskPids: 100}, runner.SandboxConfig{MemoryBytes: 512 << 20, CPUMillis: 1500, Pids: 100}, false},
		{"disabled", agentFlags{noSandbox: true}, runner.SandboxConfig{Disable: true}, false},
		{"paths", agentFlags{sandboxHide: "/srv/secret, /opt/x", sandboxKeep: "/tmp/datasets"}, runner.SandboxConfig{Hide: []string{"/srv/secret", "/opt/x"}, Keep: []string{"/tmp/datasets"}}, false},
		{"config dir hidden", agentFlags{configFile: "/srv/gpulayer/agent.toml"}, runner.SandboxConfig{Hide: []string{"/srv/gpulayer"}}, false},
		{"host network", agentFlags{taskNetwork: "host"}, runner.SandboxConfig{}, false},
		{"isolated network", agentFlags{taskNetwork: "isolated"}, runner.SandboxConfig{IsolateNetwork: true}, false},
		{"unknown network", agentFlags{taskNetwork: "none"}, runner.SandboxConfig{}, true},
		{"isolated network without a sandbox", agentFlags{taskNetwork: "isolated", noSandbox: true}, runner.SandboxConfig{}, true},
		{"negative memory", agentFlags{taskMemory: -1}, runner.SandboxConfig{}, true},
		{"negative cpus", agentFlags{taskCPUs: -0.5}, runner.SandboxConfig{}, true},
		{"relative hide", agentFlags{sandboxHide: "secret"}, runner.SandboxConfig{}, true},
		{"relative keep", agentFlags{sandboxKeep: "data"}, runner.SandboxConfig{}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.f.taskSandbox()
			if tc.bad {
				if err == nil {
					t.Fatalf("accepted: %+v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Disable != tc.want.Disable || got.MemoryBytes != tc.want.MemoryBytes || got.CPUMillis != tc.want.CPUMillis || got.Pids != tc.want.Pids || got.IsolateNetwork != tc.want.IsolateNetwork ||
				!slices.Equal(got.Hide, tc.want.Hide) || !slices.Equal(got.Keep, tc.want.Keep) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
