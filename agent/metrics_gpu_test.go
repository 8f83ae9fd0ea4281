//go:build cgo && linux

package agent

import (
	"context"
	"errors"
	"os"
	"strconv"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/gpulayer/gpulayer/agent/devices/nvml"
	"github.com/gpulayer/gpulayer/agent/devices/nvml/nvmltest"
	"github.com/gpulayer/gpulayer/sdk/executor"
)

// noExecutors is an executor host with none: the agent under test never
// gets a task.
type noExecutors struct{}

func (noExecutors) Get(context.Context, string) (executor.Executor, error) {
	return nil, errors.New("no executors here")
}
func (noExecutors) Names() []string { return nil }

// gauge is the value of family name's series with labels (0 if absent).
func gauge(t *testing.T, m *Metrics, name string, labels map[string]string) float64 {
	t.Helper()
	fams, err := m.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, s := range f.GetMetric() {
			if hasLabels(s, labels) {
				return s.GetGauge().GetValue()
			}
		}
	}
	return 0
}

func hasLabels(s *dto.Metric, want map[string]string) bool {
	n := 0
	for _, l := range s.GetLabel() {
		if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
			n++
		}
	}
	return n == len(want)
}

// waitGauge polls the agent's metrics until the series reads want.
func waitGauge(t *testing.T, m *Metrics, name string, labels map[string]string, want float64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for gauge(t, m, name, labels) != want {
		if time.Now().After(deadline) {
			fams, _ := m.Gatherer().Gather()
			for _, f := range fams {
				t.Log(f.String())
			}
			t.Fatalf("%s%v never read %v (reads %v)", name, labels, want, gauge(t, m, name, labels))
		}
		<-tick.C
	}
}

// A GPU fault shows in the health metrics as soon as the agent sees it,
// before and whatever the coordinator hears: the GPU's state set moves
// from healthy to unhealthy and the count by health follows.
func TestGPUHealthMetricsFollowFaults(t *testing.T) {
	machine := nvmltest.New("dgxh100", nvmltest.StableUUIDs())
	src, err := nvml.OpenInterface(t.Context(), nil, machine.Interface())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	m := NewMetrics()
	a, err := New(Config{
		Coordinators:         []string{"http://127.0.0.1:1"}, // never answers: the agent keeps trying to register
		JoinToken:            "glj_never-used",
		DataDir:              t.TempDir(),
		MaxTasks:             1,
		TaskUIDBase:          63150,
		TaskUIDLockDir:       t.TempDir(),
		AllowSharedUserTasks: os.Geteuid() != 0,
		HealthPoll:           50 * time.Millisecond,
		Devices:              src,
		Executors:            noExecutors{},
		Metrics:              m,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		if err := a.Run(ctx); err != nil && ctx.Err() == nil {
			t.Errorf("Run: %v", err)
		}
	}()
	defer func() {
		cancel()
		<-ran
	}()

	n := float64(machine.Count())
	waitGauge(t, m, "gpulayer_agent_gpus", map[string]string{"health": "healthy"}, n)
	uuid := a.devices[2].UUID
	machine.InjectXid(2, 48) // double-bit ECC: the GPU goes out of service
	gpu := func(state string) map[string]string {
		return map[string]string{"uuid": uuid, "index": strconv.Itoa(2), "state": state}
	}
	waitGauge(t, m, "gpulayer_agent_gpu_health", gpu("unhealthy"), 1)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"gpulayer_agent_gpu_health", gpu("healthy"), 0},
		{"gpulayer_agent_gpu_health", gpu("recovering"), 0},
		{"gpulayer_agent_gpus", map[string]string{"health": "healthy"}, n - 1},
		{"gpulayer_agent_gpus", map[string]string{"health": "unhealthy"}, 1},
		{"gpulayer_agent_tasks_running", nil, 0},
		{"gpulayer_agent_worker_command", map[string]string{"command": "none"}, 1},
	} {
		if got := gauge(t, m, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
}
