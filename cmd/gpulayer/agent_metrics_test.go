package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// metricsAddrLogged finds the address the agent says it serves metrics on.
var metricsAddrLogged = regexp.MustCompile(`msg="serving metrics".* addr=(\S+)`)

// agentMetricsURL waits for the agent to log its metrics address.
func agentMetricsURL(t *testing.T, a *agentUnderTest) string {
	t.Helper()
	var addr string
	coordinatortest.WaitFor(t, 60*time.Second, "the agent to serve metrics", func() bool {
		if m := metricsAddrLogged.FindStringSubmatch(a.stderr.String()); m != nil {
			addr = m[1]
		}
		return addr != ""
	})
	return "http://" + addr
}

// scrapeAgent reads and parses the agent's /metrics.
func scrapeAgent(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// sample is the value of the series of family name with exactly labels
// (a histogram's count); ok is false when there is no such series.
func sample(fams map[string]*dto.MetricFamily, name string, labels map[string]string) (v float64, ok bool) {
	for _, m := range fams[name].GetMetric() {
		if len(m.GetLabel()) != len(labels) {
			continue
		}
		match := true
		for _, l := range m.GetLabel() {
			match = match && labels[l.GetName()] == l.GetValue()
		}
		if !match {
			continue
		}
		switch {
		case m.GetHistogram() != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		case m.GetCounter() != nil:
			return m.GetCounter().GetValue(), true
		default:
			return m.GetGauge().GetValue(), true
		}
	}
	return 0, false
}

// submitShell submits a one-attempt job running script with sh -c.
func submitShell(t *testing.T, h *coordinatortest.Harness, script string) string {
	t.Helper()
	cfg, err := json.Marshal(map[string]any{"command": "sh", "args": []string{"-c", script}})
	if err != nil {
		t.Fatal(err)
	}
	job, err := h.Client(t, h.AdminToken).SubmitJob(t.Context(), api.JobSpec{Executor: "exec", Config: cfg, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	return job.ID
}

// An agent started with --metrics-addr serves its metrics: a job that
// succeeds and one that fails are counted by outcome, the exec plugin's
// launch is counted, the fake GPUs' health is a state set, and no other
// path is served.
func TestAgentServesMetrics(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	a := runAgent(t, h, t.TempDir(), "metered", 63130, "--fake-gpus", "dgxh100", "--metrics-addr", "127.0.0.1:0")
	url := agentMetricsURL(t, a)
	submitShell(t, h, "echo fine")
	submitShell(t, h, "echo broken >&2; exit 3")

	var fams map[string]*dto.MetricFamily
	coordinatortest.WaitFor(t, 90*time.Second, "both tasks to be counted and none to run", func() bool {
		fams = scrapeAgent(t, url)
		done, _ := sample(fams, "gpulayer_agent_task_duration_seconds", nil)
		// One scrape collects the gauges and the counters concurrently:
		// an attempt ending meanwhile can be counted done and running.
		running, _ := sample(fams, "gpulayer_agent_tasks_running", nil)
		return done == 2 && running == 0
	})
	gpu := func(state string) map[string]string {
		return map[string]string{"uuid": gpuUUID(t, fams, "0"), "index": "0", "state": state}
	}
	cases := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"gpulayer_agent_tasks_finished_total", map[string]string{"outcome": "succeeded"}, 1},
		{"gpulayer_agent_tasks_finished_total", map[string]string{"outcome": "failed"}, 1},
		{"gpulayer_agent_tasks_finished_total", map[string]string{"outcome": "gpu_fault"}, 0},
		{"gpulayer_agent_tasks_running", nil, 0},
		{"gpulayer_agent_task_slots", nil, 1},
		{"gpulayer_agent_plugin_starts_total", map[string]string{"executor": "exec"}, 1},
		{"gpulayer_agent_plugin_crashes_total", map[string]string{"executor": "exec"}, 0},
		{"gpulayer_agent_coordinator_errors_total", map[string]string{"call": "acquire"}, 0},
		{"gpulayer_agent_gpus", map[string]string{"health": "healthy"}, 8},
		{"gpulayer_agent_gpus", map[string]string{"health": "unhealthy"}, 0},
		{"gpulayer_agent_gpu_health", gpu("healthy"), 1},
		{"gpulayer_agent_gpu_health", gpu("unhealthy"), 0},
		{"gpulayer_agent_worker_command", map[string]string{"command": "none"}, 1},
		{"gpulayer_agent_worker_command", map[string]string{"command": "drain"}, 0},
	}
	for _, c := range cases {
		if got, ok := sample(fams, c.name, c.labels); !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	if n, _ := sample(fams, "gpulayer_agent_heartbeat_duration_seconds", nil); n < 1 {
		t.Errorf("no heartbeat observed")
	}
	if n := len(fams["gpulayer_agent_gpu_health"].GetMetric()); n != 8*4 {
		t.Errorf("gpulayer_agent_gpu_health has %d series, want 8 GPUs × 4 states", n)
	}
	if fams["go_goroutines"] == nil {
		t.Errorf("the Go runtime's metrics are not served")
	}

	for _, c := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/", http.StatusNotFound},
		{"GET", "/metrics/extra", http.StatusNotFound},
		{"GET", "/debug/pprof/", http.StatusNotFound},
		{"POST", "/metrics", http.StatusMethodNotAllowed},
	} {
		req, err := http.NewRequestWithContext(t.Context(), c.method, url+c.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s %s: %d, want %d", c.method, c.path, resp.StatusCode, c.want)
		}
	}
}

// gpuUUID is the uuid of the GPU with index in gpulayer_agent_gpu_health.
func gpuUUID(t *testing.T, fams map[string]*dto.MetricFamily, index string) string {
	t.Helper()
	for _, m := range fams["gpulayer_agent_gpu_health"].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["index"] == index && strings.HasPrefix(labels["uuid"], "GPU-") {
			return labels["uuid"]
		}
	}
	t.Fatalf("no GPU with index %s in gpulayer_agent_gpu_health", index)
	return ""
}

// A --metrics-addr the agent cannot serve on stops it at start, naming the
// address, whether it comes from the flag, its variable or a config file:
// one that does not parse or is not loopback is a usage error (exit 2),
// one already in use fails to bind (exit 1).
func TestAgentMetricsAddrRefused(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	cases := []struct {
		name, addr, via string // via: flag, env or config
		code            int
		says            string
	}{
		{"not host:port", "nonsense", "flag", exitUsage, `"nonsense"`},
		{"not loopback", "0.0.0.0:0", "flag", exitUsage, "--metrics-allow-remote"},
		{"not loopback from the environment", "0.0.0.0:0", "env", exitUsage, "--metrics-allow-remote"},
		{"not loopback from a config file", "0.0.0.0:0", "config", exitUsage, "--metrics-allow-remote"},
		{"in use", taken.Addr().String(), "flag", 1, taken.Addr().String()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			args := []string{"agent", "run", "--coordinator", "http://127.0.0.1:1", "--data-dir", filepath.Join(dir, "data"),
				"--fake-gpus", "none", "--max-tasks", "1", "--task-uid-base", "63140"}
			if os.Geteuid() != 0 {
				args = append(args, "--allow-shared-user-tasks")
			}
			var env []string
			switch c.via {
			case "flag":
				args = append(args, "--metrics-addr", c.addr)
			case "env":
				env = []string{"GPULAYER_METRICS_ADDR=" + c.addr}
			case "config":
				file := filepath.Join(dir, "agent.toml")
				if err := os.WriteFile(file, []byte("metrics-addr = \""+c.addr+"\"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--config", file)
			}
			r := run(t, env, args...)
			if r.code != c.code || !strings.Contains(r.stderr, c.says) {
				t.Fatalf("exit %d, stderr %q; want exit %d saying %s", r.code, r.stderr, c.code, c.says)
			}
		})
	}
}
