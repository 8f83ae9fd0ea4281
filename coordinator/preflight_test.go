package coordinator_test

import (
	"net/http"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// preflight is for a gang job whose tasks ask for GPUs: anything else is
// refused and no job is made; a gang job with it reads it back, and its
// assignments carry it.
func TestPreflightIsForGangsOfGPUTasks(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	for name, body := range map[string]string{
		"not a gang": `{"executor":"exec","config":{"command":"true"},"count":2,"preflight":true,"resources":{"gpus":1}}`,
		"no GPUs":    `{"executor":"exec","config":{"command":"true"},"count":2,"gang":true,"preflight":true}`,
		"not a bool": `{"executor":"exec","config":{"command":"true"},"count":2,"gang":true,"preflight":"yes","resources":{"gpus":1}}`,
		"zero GPUs":  `{"executor":"exec","config":{"command":"true"},"count":2,"gang":true,"preflight":true,"resources":{"gpus":0}}`,
	} {
		r := call(t, h.URL, "POST", "/v1/jobs", h.AdminToken, []byte(body), nil)
		if r.status != http.StatusBadRequest || r.body.Error == nil || r.body.Error.Code != api.CodeInvalidArgument {
			t.Errorf("%s: %d %s", name, r.status, r.raw)
		}
	}
	if jobs, err := admin.Jobs(ctx, 10); err != nil || len(jobs) != 0 {
		t.Fatalf("a refused job was kept: %+v %v", jobs, err)
	}
	worker := twoGPUWorker(t, h)
	job, err := admin.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`), Count: 2, Gang: true, Preflight: true, Resources: &api.Resources{GPUs: 1}})
	if err != nil || !job.Preflight {
		t.Fatalf("a gang job with preflight: %+v %v", job, err)
	}
	acq, err := worker.Acquire(ctx, api.AcquireRequest{WaitSeconds: 1, MaxTasks: 2})
	if err != nil || len(acq.Tasks) != 2 || !acq.Tasks[0].Preflight || !acq.Tasks[1].Preflight {
		t.Fatalf("the gang's assignments: %+v %v", acq, err)
	}
}

// The cluster's policy (PreflightGangs) gives preflight to a gang job of
// at least that many ranks whose tasks ask for GPUs, and to no other.
func TestPreflightPolicyForLargeGangs(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{Tweak: func(c *coordinator.Config) { c.PreflightGangs = 4 }})
	admin := h.Client(t, h.AdminToken)
	for _, c := range []struct {
		name string
		spec api.JobSpec
		want bool
	}{
		{"a gang of 4", api.JobSpec{Count: 4, Gang: true, Resources: &api.Resources{GPUs: 8}}, true},
		{"a gang of 3", api.JobSpec{Count: 3, Gang: true, Resources: &api.Resources{GPUs: 8}}, false},
		{"a gang of 4 without GPUs", api.JobSpec{Count: 4, Gang: true}, false},
		{"4 tasks, not a gang", api.JobSpec{Count: 4, Resources: &api.Resources{GPUs: 1}}, false},
		{"a gang of 2 that asks", api.JobSpec{Count: 2, Gang: true, Preflight: true, Resources: &api.Resources{GPUs: 1}}, true},
	} {
		c.spec.Executor, c.spec.Config = "exec", []byte(`{"command":"true"}`)
		job, err := admin.SubmitJob(t.Context(), c.spec)
		if err != nil || job.Preflight != c.want {
			t.Errorf("%s: preflight %v (%v), want %v", c.name, job.Preflight, err, c.want)
		}
	}
}
