//go:build cgo && linux

package agent

import (
	"bytes"
	"context"
	"errors"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/gpulayer/gpulayer/agent/devices/nvml"
	"github.com/gpulayer/gpulayer/agent/devices/nvml/nvmltest"
	"github.com/gpulayer/gpulayer/internal/telemetry/metricslint"
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
	return series(t, m, name, labels).GetGauge().GetValue()
}

// hasSeries reports whether the metrics hold a series of name with labels.
func hasSeries(t *testing.T, m *Metrics, name string, labels map[string]string) bool {
	t.Helper()
	return series(t, m, name, labels) != nil
}

// series is the first series of name with labels, or nil.
func series(t *testing.T, m *Metrics, name string, labels map[string]string) *dto.Metric {
	t.Helper()
	fams, err := m.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		if i := slices.IndexFunc(f.GetMetric(), func(s *dto.Metric) bool { return hasLabels(s, labels) }); i >= 0 {
			return f.GetMetric()[i]
		}
	}
	return nil
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

// GPU metrics under DCGM's names, sampled in the background: the values
// NVML gives, the task that holds a GPU (none here), and NVML calls that
// fail counted by call and code; an XID is counted by GPU, XID and class.
func TestGPUMetricsAreSampled(t *testing.T) {
	machine := nvmltest.New("dgxh100", nvmltest.StableUUIDs())
	machine.SetUtilization(nvmltest.All, 87, 41)
	machine.SetMemoryUsed(nvmltest.All, 10<<30)
	machine.SetTemperature(nvmltest.All, 64)
	machine.SetPowerUsage(nvmltest.All, 412_500)
	machine.Fail(5, "GetTemperature", gonvml.ERROR_UNKNOWN, nvmltest.Always)
	src, err := nvml.OpenInterface(t.Context(), nil, machine.Interface())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	m := NewMetrics()
	a, err := New(Config{
		Coordinators:         []string{"http://127.0.0.1:1"}, // never answers
		JoinToken:            "glj_never-used",
		DataDir:              t.TempDir(),
		MaxTasks:             1,
		TaskUIDBase:          63160,
		TaskUIDLockDir:       t.TempDir(),
		AllowSharedUserTasks: os.Geteuid() != 0,
		HealthPoll:           50 * time.Millisecond,
		GPUSampleInterval:    50 * time.Millisecond,
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
	gpu0 := map[string]string{"gpu": "0", "job_id": "", "task_id": ""}
	waitGauge(t, m, "DCGM_FI_DEV_GPU_UTIL", gpu0, 87)
	for _, c := range []struct {
		name string
		want float64
	}{
		{"DCGM_FI_DEV_MEM_COPY_UTIL", 41},
		{"DCGM_FI_DEV_FB_USED", 10 << 10},
		{"DCGM_FI_DEV_GPU_TEMP", 64},
		{"DCGM_FI_DEV_POWER_USAGE", 412.5},
	} {
		if got := gauge(t, m, c.name, gpu0); got != c.want {
			t.Errorf("%s = %v, want %v", c.name, got, c.want)
		}
	}
	if got := gauge(t, m, "DCGM_FI_DEV_GPU_TEMP", map[string]string{"gpu": "5"}); got != 0 {
		t.Errorf("GPU 5's temperature, which NVML fails to read, reads %v", got)
	}
	waitCounter(t, m, "gpulayer_nvml_errors_total", map[string]string{"call": "GetTemperature", "code": gonvml.ErrorString(gonvml.ERROR_UNKNOWN)})
	machine.InjectXid(3, 79)
	waitCounter(t, m, "gpulayer_gpu_xid_total", map[string]string{"uuid": a.devices[3].UUID, "xid": "79"})
	lintClean(t, m)
}

// lintClean fails the test for each problem promtool's rules (promlint)
// find in what m serves: the DCGM-named families included, which only an
// agent reading NVML serves.
func lintClean(t *testing.T, m *Metrics) {
	t.Helper()
	fams, err := m.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	for _, f := range fams {
		if err := expfmt.NewEncoder(&page, expfmt.NewFormat(expfmt.TypeTextPlain)).Encode(f); err != nil {
			t.Fatal(err)
		}
	}
	problems, err := metricslint.Lint(&page)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s", p)
	}
}

// waitCounter polls until a counter series is above 0.
func waitCounter(t *testing.T, m *Metrics, name string, labels map[string]string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		fams, err := m.Gatherer().Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fams {
			for _, s := range f.GetMetric() {
				if f.GetName() == name && hasLabels(s, labels) && s.GetCounter().GetValue() > 0 {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s%v never counted", name, labels)
		}
		<-tick.C
	}
}
