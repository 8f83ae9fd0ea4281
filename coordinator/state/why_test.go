package state

import (
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// A pending task that no live worker could take, even with every GPU
// free, says what is missing; one that waits only for room says nothing.
func TestPendingReason(t *testing.T) {
	eight := make([]string, 8)
	for i := range eight {
		eight[i] = "GPU-" + string(rune('a'+i))
	}
	sick := register("sick", "GPU-s1", "GPU-s2")
	sick.Devices[1].Healthy = false
	offline := command.SetWorkerStatus{WorkerID: "w1", Status: api.WorkerOffline, Now: at(1)}
	spec := func(edit func(*command.JobSpec)) command.SubmitJob {
		j := submit("j", 1, 0)
		edit(&j.Spec)
		return j
	}
	many := func(n int, edit func(*command.JobSpec)) command.SubmitJob {
		j := submit("j", n, 0)
		edit(&j.Spec)
		return j
	}
	gpus := func(n int) func(*command.JobSpec) {
		return func(s *command.JobSpec) { s.Resources = &command.Resources{GPUs: n} }
	}
	cases := []struct {
		name string
		log  []command.Command
		want string
	}{
		{"no worker at all", []command.Command{submit("j", 1, 0)}, "no live worker: no worker is registered"},
		{"every worker offline", []command.Command{register("w1"), offline, submit("j", 1, 0)}, "no live worker: 1 offline"},
		{"no worker offers the executor", []command.Command{register("w1"), spec(func(s *command.JobSpec) { s.Executor = "pytorch" })},
			`no live worker offers executor "pytorch"`},
		{"more GPUs than any worker has", []command.Command{register("w1", eight...), register("w2", "GPU-z"), spec(gpus(9))},
			"needs 9 GPUs; the most any live worker has is 8"},
		{"not enough healthy GPUs", []command.Command{sick, spec(gpus(2))},
			"needs 2 GPUs; the most any live worker has healthy now is 1"},
		{"no GPU of the model", []command.Command{register("w1", "GPU-1"), spec(func(s *command.JobSpec) { s.Resources = &command.Resources{GPUs: 1, GPUModel: "A100"} })},
			"needs 1 GPUs (model A100); the most any live worker has is 0"},
		{"capability not offered", []command.Command{
			command.RegisterWorker{WorkerID: "w1", Credential: command.CredentialRecord{ID: "c1", Kind: "worker", Hash: "h"}, Capabilities: []string{"cpu"}, Executors: []string{"exec"}, Now: at(0)},
			spec(func(s *command.JobSpec) { s.Capability = "rdma" })},
			`capability "rdma" is not offered by any live worker that runs executor "exec"`},
		{"target worker offline", []command.Command{register("w1"), register("w2"), offline, spec(func(s *command.JobSpec) { s.Target = &command.Target{Kind: api.TargetWorker, ID: "w1"} })},
			"target worker w1 is offline"},
		{"target worker deregistered since", []command.Command{register("node3"), spec(func(s *command.JobSpec) { s.Target = &command.Target{Kind: api.TargetWorker, ID: "node3"} }),
			command.ControlWorker{WorkerID: "node3", Action: command.ActionDeregister, Self: true, By: "node3", Now: at(5)}},
			"target worker node3 is not registered"},
		{"target worker draining", []command.Command{register("w1"), control("w1", command.ActionDrain, 100), spec(func(s *command.JobSpec) { s.Target = &command.Target{Kind: api.TargetWorker, ID: "w1"} })},
			"target worker w1 is draining"},
		{"group without a live member", []command.Command{register("w1"), register("w2"), offline,
			command.CreateGroup{GroupID: "g", Members: []command.GroupMember{{Kind: memberWorker, ID: "w1"}}, By: "admin", Now: at(1)},
			spec(func(s *command.JobSpec) { s.Target = &command.Target{Kind: api.TargetGroup, ID: "g"} })},
			"target group g has no live worker (1 members)"},
		{"group member without the executor", []command.Command{register("w1"),
			command.CreateGroup{GroupID: "g", Members: []command.GroupMember{{Kind: memberWorker, ID: "w1"}}, By: "admin", Now: at(1)},
			spec(func(s *command.JobSpec) {
				s.Executor = "echo"
				s.Target = &command.Target{Kind: api.TargetGroup, ID: "g"}
			})},
			`no live worker in group g offers executor "echo"`},
		{"waits only for room", []command.Command{register("w1", "GPU-1"), submit("k", 1, 1),
			command.AssignTask{TaskID: "k-a", WorkerID: "w1", AttemptID: "a1", Devices: []string{"GPU-1"}, Now: at(2)}, spec(gpus(1))}, ""},
		{"some worker fits", []command.Command{register("w1", "GPU-1"), register("w2", eight...), spec(gpus(4))}, ""},
		{"exclusive beside another job's task", []command.Command{register("w1", "GPU-1", "GPU-2"), submit("k", 1, 0),
			command.AssignTask{TaskID: "k-a", WorkerID: "w1", AttemptID: "a1", Now: at(2)}, spec(func(s *command.JobSpec) { s.ExclusiveWorker = true })},
			"waits for a worker: of the 1 live worker that can run it, 1 runs other tasks and it runs alone (--exclusive)"},
		{"exclusive beside its own task", []command.Command{register("w1"), register("w2"), many(3, func(s *command.JobSpec) { s.ExclusiveWorker = true }),
			command.AssignTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "a1", Now: at(2)},
			command.AssignTask{TaskID: "j-b", WorkerID: "w2", AttemptID: "a2", Now: at(2)}},
			"waits for a worker: of the 2 live workers that can run it, 2 run other tasks and it runs alone (--exclusive)"},
		{"exclusive with an idle worker left", []command.Command{register("w1"), register("w2"), many(3, func(s *command.JobSpec) { s.ExclusiveWorker = true }),
			command.AssignTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "a1", Now: at(2)}}, ""},
		{"max per worker reached", []command.Command{register("w1", "GPU-1", "GPU-2"), many(2, func(s *command.JobSpec) { s.MaxPerWorker = 1 }),
			command.AssignTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "a1", Now: at(2)}},
			"waits for a worker: of the 1 live worker that can run it, 1 already runs 1 of its tasks (--max-per-worker 1)"},
		{"max per worker not reached", []command.Command{register("w1"), many(3, func(s *command.JobSpec) { s.MaxPerWorker = 2 }),
			command.AssignTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "a1", Now: at(2)}}, ""},
		{"one worker still open", []command.Command{register("w1"), register("w2"), submit("x", 1, 0), submit("k", 1, 0),
			command.AssignTask{TaskID: "x-a", WorkerID: "w1", AttemptID: "a1", Now: at(2)},
			command.AssignTask{TaskID: "k-a", WorkerID: "w2", AttemptID: "a2", Now: at(2)},
			many(2, func(s *command.JobSpec) { s.MaxPerWorker = 1 }),
			command.AssignTask{TaskID: "j-a", WorkerID: "w2", AttemptID: "a3", Now: at(3)}},
			""},
		{"mixed rules", []command.Command{register("w1"), register("w2"), exclusive("x"),
			command.AssignTask{TaskID: "x-a", WorkerID: "w1", AttemptID: "a1", Now: at(2)},
			many(2, func(s *command.JobSpec) { s.MaxPerWorker = 1 }),
			command.AssignTask{TaskID: "j-a", WorkerID: "w2", AttemptID: "a3", Now: at(3)}},
			"waits for a worker: of the 2 live workers that can run it, 1 runs an exclusive task of job x; 1 already runs 1 of its tasks (--max-per-worker 1)"},
		// Another team's job is named by its team alone: a reason does not
		// tell one team that another's job exists (a review found "job x").
		{"another team's exclusive task", []command.Command{register("w1"),
			command.CreateTeam{Name: "vision", Settings: borrowing(100, 0, nil), Now: at(0)}, inTeam(exclusive("x"), "vision"),
			command.AssignTask{TaskID: "x-a", WorkerID: "w1", AttemptID: "a1", Now: at(2)},
			many(1, func(*command.JobSpec) {})},
			"waits for a worker: of the 1 live worker that can run it, 1 runs an exclusive task of a job of team vision"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New()
			mustApply(t, s, c.log...)
			j, err := s.Job("j")
			if err != nil {
				t.Fatal(err)
			}
			if j.PendingReason != c.want {
				t.Fatalf("pending reason %q, want %q", j.PendingReason, c.want)
			}
			page, _ := s.JobsPage(0, 0)
			for _, e := range page {
				if e.Job.Job.ID == "j" && e.Job.PendingReason != c.want {
					t.Fatalf("the list says %q", e.Job.PendingReason)
				}
			}
		})
	}
}

// exclusive is a one-task job that runs alone on its worker.
func exclusive(id string) command.SubmitJob {
	j := submit(id, 1, 0)
	j.Spec.ExclusiveWorker = true
	return j
}

// A job with no pending task has no reason, whatever the workers.
func TestNoPendingReasonOnceAssigned(t *testing.T) {
	s := New()
	mustApply(t, s, register("w1"), submit("j", 1, 0),
		command.AssignTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "a1", Now: at(2)},
		command.SetWorkerStatus{WorkerID: "w1", Status: api.WorkerOffline, Now: at(3)})
	if j, _ := s.Job("j"); j.PendingReason != "" {
		t.Fatalf("an assigned job says %q", j.PendingReason)
	}
}
