//go:build cgo && linux

package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpulayer/gpulayer/agent/devices/nvml/nvmltest"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Fractional sharing end to end on a real agent over the NVML fixture:
// two tasks of 30 and 40 GiB run at once on one GPU, each told its share;
// when NVML's process table shows the first using 35 GiB, the agent's
// watchdog stops it and its job says why, and the second runs on to its
// end.
func TestSharedGPUTasksRunTogetherAndTheWatchdogStopsOneOverItsShare(t *testing.T) {
	h := startCoordinator(t)
	admin := h.Client(t, h.AdminToken)
	m := nvmltest.New("dgxh100", nvmltest.StableUUIDs())
	ra := startAgent(t, h.URL, h.JoinToken, "sharer", "", agentOpts{source: fixtureSource(t, m), gpuSampleInterval: 50 * time.Millisecond})
	coordinatortest.WaitFor(t, 30*time.Second, "registration", func() bool {
		w, err := admin.Worker(t.Context(), "sharer")
		return err == nil && len(w.Devices) == m.Count()
	})

	// Each task says what it was given, writes its pid, and waits for the
	// other's pid (so both must run at once) and then for "done".
	dir := dirForTasks(t, "gpulayer-sharing-", 0o777)
	const script = `echo "share=$GPULAYER_GPU_MEMORY_MIB gpus=$CUDA_VISIBLE_DEVICES"; echo $$ > "$1/$2"; ` +
		`while [ ! -e "$1/$3" ] || [ ! -e "$1/done" ]; do sleep 0.05; done`
	submit := func(me, other string, gib uint64) string {
		cfg, err := json.Marshal(map[string]any{"command": "sh", "args": []string{"-c", script, "sh", dir, me, other}})
		if err != nil {
			t.Fatal(err)
		}
		j, err := admin.SubmitJob(t.Context(), api.JobSpec{Executor: "exec", MaxAttempts: 1, TimeoutSeconds: 60, Config: cfg,
			Resources: &api.Resources{GPUs: 1, GPUMemoryMiB: gib << 10, GPUSharing: api.SharingUnenforced}})
		if err != nil {
			t.Fatal(err)
		}
		return j.ID
	}
	over, under := submit("a", "b", 30), submit("b", "a", 40)
	// The pid NVML reports is the host's: the task's own $$ is its PID
	// namespace's.
	pidOf := func(name, other string) uint32 {
		coordinatortest.WaitFor(t, 30*time.Second, "task "+name+" to run", func() bool {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				return false
			}
			_, err = strconv.ParseUint(strings.TrimSpace(string(b)), 10, 32)
			return err == nil
		})
		return hostPID(t, dir, name, other)
	}
	pidA, pidB := pidOf("a", "b"), pidOf("b", "a")
	jo, _ := admin.Job(t.Context(), over)
	ju, _ := admin.Job(t.Context(), under)
	gpu := jo.Tasks[0].Devices
	if len(gpu) != 1 || !slices.Equal(gpu, ju.Tasks[0].Devices) {
		t.Fatalf("the shares were placed on %v and %v, want one GPU", gpu, ju.Tasks[0].Devices)
	}
	for id, want := range map[string]string{over: "share=30720 gpus=" + gpu[0], under: "share=40960 gpus=" + gpu[0]} {
		coordinatortest.WaitFor(t, 30*time.Second, "job "+id+"'s first line", func() bool { return strings.Contains(logsOf(t, admin, id), want) })
	}

	index := slices.IndexFunc(ra.gpus, func(d api.Device) bool { return d.UUID == gpu[0] })
	whole := func(pid uint32, gib uint64) gonvml.ProcessInfo {
		return gonvml.ProcessInfo{Pid: pid, UsedGpuMemory: gib << 30, GpuInstanceId: 0xFFFFFFFF, ComputeInstanceId: 0xFFFFFFFF}
	}
	m.SetProcesses(index, whole(pidA, 35), whole(pidB, 10))
	j := waitJob(t, admin, over, terminal, "the task over its share to be stopped")
	want := "used 35840 MiB of GPU " + gpu[0] + ", over its share of 30720 MiB"
	if j.State != api.TaskFailed || !strings.Contains(j.Tasks[0].Attempts[0].Reason, want) {
		t.Fatalf("job over its share: %s, attempts %+v, want failed with %q", j.State, j.Tasks[0].Attempts, want)
	}
	if ju, _ := admin.Job(t.Context(), under); terminal(ju) {
		t.Fatalf("the task within its share ended too: %+v", ju.Tasks[0].Attempts)
	}
	if err := os.WriteFile(filepath.Join(dir, "done"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if j := waitJob(t, admin, under, terminal, "the task within its share to end"); j.State != api.TaskSucceeded {
		t.Fatalf("the task within its share: %s, attempts %+v", j.State, j.Tasks[0].Attempts)
	}
}

// An "enforced" share waits while no GPU reports how it would enforce
// it, and runs on an agent whose MPS control pipe is found: its GPUs are
// reported with sharing "mps" and the task gets MPS's pipe directory and
// its share as MPS's pinned memory limit. When the pipe goes, so does
// the GPUs' sharing.
func TestEnforcedShareRunsOnlyUnderMPS(t *testing.T) {
	h := startCoordinator(t)
	admin := h.Client(t, h.AdminToken)
	job, err := admin.SubmitJob(t.Context(), api.JobSpec{Executor: "exec", MaxAttempts: 1,
		Config:    []byte(`{"command":"sh","args":["-c","echo limit=$CUDA_MPS_PINNED_DEVICE_MEM_LIMIT pipe=$CUDA_MPS_PIPE_DIRECTORY share=$GPULAYER_GPU_MEMORY_MIB"]}`),
		Resources: &api.Resources{GPUs: 1, GPUMemoryMiB: 8192, GPUSharing: api.SharingEnforced}})
	if err != nil {
		t.Fatal(err)
	}
	plain := nvmltest.New("dgxa100", nvmltest.StableUUIDs())
	startAgent(t, h.URL, h.JoinToken, "plain", "", agentOpts{source: fixtureSource(t, plain)})
	j := waitJob(t, admin, job.ID, func(j api.Job) bool { return strings.HasPrefix(j.Tasks[0].PendingReason, "needs") },
		"the share to wait for a GPU that enforces it")
	if want := "needs a share of 8192 MiB of one GPU that enforces it (MPS); no live worker has such a GPU"; j.Tasks[0].PendingReason != want {
		t.Fatalf("pending reason %q, want %q", j.Tasks[0].PendingReason, want)
	}

	pipe := t.TempDir()
	if err := os.WriteFile(filepath.Join(pipe, "control"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	m := nvmltest.New("dgxh100", nvmltest.StableUUIDs())
	// MPS serves one uid at a time: as root the agent runs every task as
	// one task user with it.
	startAgent(t, h.URL, h.JoinToken, "mps", "", agentOpts{source: fixtureSource(t, m), mpsPipeDir: pipe, taskUser: strconv.FormatUint(uint64(nextTaskUIDBase()), 10)})
	j = waitJob(t, admin, job.ID, terminal, "the enforced share to run under MPS")
	if want := "limit=0=8192M pipe=" + pipe + " share=8192"; j.State != api.TaskSucceeded || !strings.Contains(logsOf(t, admin, job.ID), want) {
		t.Fatalf("job %s, logs %q, want %q", j.State, logsOf(t, admin, job.ID), want)
	}
	if j.Tasks[0].Attempts[0].WorkerID != "mps" {
		t.Fatalf("ran on %s, want the MPS worker", j.Tasks[0].Attempts[0].WorkerID)
	}
	w, err := admin.Worker(t.Context(), "mps")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range w.Devices {
		if d.Sharing != api.DeviceSharingMPS {
			t.Fatalf("device %s reported sharing %q, want mps", d.UUID, d.Sharing)
		}
	}
	// The daemon goes: the next reports say the GPUs enforce nothing.
	if err := os.Remove(filepath.Join(pipe, "control")); err != nil {
		t.Fatal(err)
	}
	coordinatortest.WaitFor(t, 30*time.Second, "the GPUs to be reported without MPS", func() bool {
		w, err := admin.Worker(t.Context(), "mps")
		return err == nil && !slices.ContainsFunc(w.Devices, func(d api.Device) bool { return d.Sharing != "" })
	})
}
