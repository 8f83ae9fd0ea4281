package integration

import (
	"testing"

	"github.com/gpulayer/gpulayer/plugins/container/containertest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// gangHelloImage is examples/gang-hello in a FROM-scratch image
// (examples/containers).
const gangHelloImage = "gpulayer-gang-hello:test"

// A gang of containers meets through rendezvous: four ranks in
// containers on two agents, two each, reach the master rank's port over
// the host network a gang member's container gets (docs/containers.md)
// and agree on the world, as examples/gang-hello does outside containers.
func TestContainerGangMeets(t *testing.T) {
	c := containertest.DockerOrSkip(t)
	if err := containertest.BuildImage(c, gangHelloImage, "github.com/gpulayer/gpulayer/examples/gang-hello", "gang-hello"); err != nil {
		t.Fatal(err)
	}
	h := startCoordinator(t)
	admin := h.Client(t, h.AdminToken)
	for _, id := range []string{"node-0", "node-1"} {
		startAgent(t, h.URL, h.JoinToken, id, "dgxh100", agentOpts{containers: true, cdiDir: t.TempDir()})
	}
	job, err := admin.SubmitJob(t.Context(), api.JobSpec{
		Executor: api.ContainerExecutor, Config: []byte(`{"image":"` + gangHelloImage + `"}`),
		Count: 4, Gang: true, MaxPerWorker: 2, MaxAttempts: 1,
		Resources: &api.Resources{GPUs: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	j := waitJob(t, admin, job.ID, terminal, "container gang to end")
	if j.State != api.TaskSucceeded {
		t.Fatalf("gang ended %s: %s", j.State, gangReport(t, admin, job.ID))
	}
	waitForWorld(t, admin, job.ID, 1)
}
