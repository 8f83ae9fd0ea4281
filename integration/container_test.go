package integration

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	pc "github.com/gpulayer/gpulayer/plugins/container"
	"github.com/gpulayer/gpulayer/plugins/container/containertest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// A container job through a real coordinator and agent (fake GPUs, the
// real Docker daemon): the agent advertises the container executor, the
// task runs in a container as its task user with its GPU named by the CDI
// spec's edits, its memory limit from the job, its output in the job's
// logs and its exit code as the task's; a bad container config is refused
// at submit.
func TestContainerJobEndToEnd(t *testing.T) {
	containertest.DockerOrSkip(t)
	h := startCoordinator(t)
	admin := h.Client(t, h.AdminToken)
	ag := startAgent(t, h.URL, h.JoinToken, "node-c", "dgxh100", agentOpts{containers: true, cdiDir: t.TempDir()})
	ctx := t.Context()

	if _, err := admin.SubmitJob(ctx, api.JobSpec{Executor: "container", Config: json.RawMessage(`{"image":"--privileged"}`)}); err == nil || !strings.Contains(err.Error(), "not an image reference") {
		t.Fatalf("a bad image reference: %v", err)
	}

	cfg, _ := json.Marshal(api.ContainerConfig{Image: containertest.ProbeImage, Args: []string{
		"id", "env", "GPULAYER_TASK_UID", "env", "NVIDIA_VISIBLE_DEVICES", "env", "GPULAYER_CDI_DEVICES", "caps", "memlimit", "exit", "4",
	}})
	job, err := admin.SubmitJob(ctx, api.JobSpec{Executor: "container", Config: cfg, Resources: &api.Resources{GPUs: 1, MemoryMiB: 64}, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	j := waitJob(t, admin, job.ID, terminal, "container job to end")
	task := j.Tasks[0]
	if j.State != api.TaskFailed || task.ExitCode == nil || *task.ExitCode != 4 {
		t.Fatalf("job ended %s: %+v, want failed with exit code 4", j.State, task)
	}
	out := logsOf(t, admin, job.ID)
	lines := strings.Split(out, "\n")
	var uid string
	for _, l := range lines {
		if v, ok := strings.CutPrefix(l, "env GPULAYER_TASK_UID="); ok {
			uid = v
		}
	}
	gpu := task.Attempts[0].Devices
	if len(gpu) != 1 || !slices.ContainsFunc(ag.gpus, func(d api.Device) bool { return d.UUID == gpu[0] }) {
		t.Fatalf("recorded devices %v", gpu)
	}
	for _, want := range []string{
		"env NVIDIA_VISIBLE_DEVICES=" + gpu[0],
		"env GPULAYER_CDI_DEVICES=", // the executor's instruction, not the task's
		"CapEff: 0000000000000000",
		"memlimit: 67108864 <nil>",
	} {
		if !slices.Contains(lines, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if uid != "" && !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "uid="+uid+" gid=") }) {
		t.Errorf("the container did not run as the task uid %s:\n%s", uid, out)
	}
}

// Cancelling a container job, and stopping the agent under a running
// one, leave no container of theirs behind.
func TestContainerCancelAndAgentStopLeaveNoContainer(t *testing.T) {
	c := containertest.DockerOrSkip(t)
	h := startCoordinator(t)
	admin := h.Client(t, h.AdminToken)
	ag := startAgent(t, h.URL, h.JoinToken, "node-s", "dgxh100", agentOpts{containers: true, cdiDir: t.TempDir()})
	sleeper := api.JobSpec{Executor: api.ContainerExecutor, Config: json.RawMessage(`{"image":"` + containertest.ProbeImage + `","args":["sleep"]}`), MaxAttempts: 1}
	list := func(jobID string) []container.Summary {
		t.Helper()
		l, err := c.ContainerList(t.Context(), container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", pc.LabelJob+"="+jobID))})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	left := func(jobID string) int { return len(list(jobID)) }
	running := func(jobID string) {
		t.Helper()
		waitJob(t, admin, jobID, func(j api.Job) bool { return j.Tasks[0].State == api.TaskRunning }, "container task to run")
		coordinatortest.WaitFor(t, 30*time.Second, "its container to run", func() bool {
			l := list(jobID)
			return len(l) == 1 && l[0].State == "running"
		})
	}

	job, err := admin.SubmitJob(t.Context(), sleeper)
	if err != nil {
		t.Fatal(err)
	}
	running(job.ID)
	if _, err := admin.CancelJob(t.Context(), job.ID); err != nil {
		t.Fatal(err)
	}
	waitJob(t, admin, job.ID, terminal, "cancelled job to end")
	coordinatortest.WaitFor(t, 30*time.Second, "the cancelled job's container to go", func() bool { return left(job.ID) == 0 })

	job, err = admin.SubmitJob(t.Context(), sleeper)
	if err != nil {
		t.Fatal(err)
	}
	running(job.ID)
	if err := ag.stop(); err != nil {
		t.Logf("agent stopped: %v", err)
	}
	coordinatortest.WaitFor(t, 30*time.Second, "the stopped agent's container to go", func() bool { return left(job.ID) == 0 })
}
