package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
)

// gpulayer dev --agent-metrics-addr serves the agent's metrics there,
// beside the coordinator's on its HTTP address.
func TestDevServesAgentMetrics(t *testing.T) {
	addr := coordinatortest.FreeAddr(t)
	env := startDevWith(t, "--agent-metrics-addr", addr)
	coordURL := strings.TrimPrefix(env[0], "GPULAYER_ADDR=")
	fams := parsePage(t, getPage(t, coordURL))
	if fams["gpulayer_raft_term"] == nil {
		t.Fatalf("the coordinator serves no gpulayer_raft_term at %s", coordURL)
	}
	coordinatortest.WaitFor(t, 30*time.Second, "the agent's GPUs in its metrics", func() bool {
		v, ok := sample(parsePage(t, getPage(t, "http://"+addr)), "gpulayer_agent_gpus", map[string]string{"health": "healthy"})
		return ok && v == 8
	})
}

// A --agent-metrics-addr dev cannot serve on is a usage error (exit 2)
// before anything starts: no env file is written, nothing says running.
func TestDevAgentMetricsAddrRefused(t *testing.T) {
	for _, addr := range []string{"nonsense", "0.0.0.0:9400", "10.1.2.3:9400"} {
		t.Run(addr, func(t *testing.T) {
			envFile := filepath.Join(t.TempDir(), "env")
			r := run(t, nil, "dev", "--http-addr", "127.0.0.1:0", "--env-file", envFile, "--agent-metrics-addr", addr)
			if r.code != exitUsage || !strings.Contains(r.stderr, "--agent-metrics-addr") || !strings.Contains(r.stderr, addr) {
				t.Fatalf("exit %d, stderr %q; want exit %d naming the flag and %s", r.code, r.stderr, exitUsage, addr)
			}
			if strings.Contains(r.stdout, "running") {
				t.Errorf("dev said it was running: %q", r.stdout)
			}
			if _, err := os.Stat(envFile); !os.IsNotExist(err) {
				t.Errorf("env file written (%v)", err)
			}
		})
	}
}
