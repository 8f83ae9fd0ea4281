package heartbeat

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
)

var t0 = time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)

// leases is the lease manager's part a beat uses: it records what it was
// told and renews every lease to a fixed time.
type leases struct {
	renewed map[string][]string
	until   time.Time
}

func (l *leases) Heartbeat(workerID string, running []string) time.Time {
	if l.renewed == nil {
		l.renewed = map[string][]string{}
	}
	l.renewed[workerID] = running
	if len(running) == 0 {
		return time.Time{}
	}
	return l.until
}

// rig is a real store, written through a proposer that applies at once
// (before, when set, applying what happens meanwhile: another write that
// commits between the beat's read and its own write).
type rig struct {
	s         *state.Store
	meanwhile map[string]command.Command // by the type name of the write it precedes
	leases    *leases
}

func newRig(t *testing.T, setup ...command.Command) *rig {
	t.Helper()
	r := &rig{s: state.New(), meanwhile: map[string]command.Command{}, leases: &leases{until: t0.Add(time.Minute)}}
	for _, c := range setup {
		if err := r.s.Apply(c).(state.Result).Err(); err != nil {
			t.Fatalf("%T: %v", c, err)
		}
	}
	return r
}

func (r *rig) propose(_ context.Context, c command.Command) (state.Result, error) {
	if m, ok := r.meanwhile[typeName(c)]; ok {
		delete(r.meanwhile, typeName(c))
		r.s.Apply(m)
	}
	return r.s.Apply(c).(state.Result), nil
}

func typeName(c command.Command) string {
	switch c.(type) {
	case command.SetWorkerStatus:
		return "SetWorkerStatus"
	case command.UpdateWorker:
		return "UpdateWorker"
	}
	return ""
}

func (r *rig) handler() *Handler {
	return &Handler{Store: r.s, Propose: r.propose, Leases: r.leases}
}

func gpu(uuid string) command.Device {
	return command.Device{UUID: uuid, Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559, Healthy: true}
}

func register(id string, devs ...command.Device) command.RegisterWorker {
	return command.RegisterWorker{WorkerID: id, Credential: command.CredentialRecord{ID: "cred-" + id, Kind: "worker", Hash: "h"},
		Capabilities: []string{"*"}, Executors: []string{"exec"}, Devices: devs, Now: t0}
}

func offline(id string) command.SetWorkerStatus {
	return command.SetWorkerStatus{WorkerID: id, Status: state.WorkerOffline, Now: t0.Add(time.Second)}
}

func worker(t *testing.T, s *state.Store, id string) state.Worker {
	t.Helper()
	rec, err := s.Worker(id)
	if err != nil {
		t.Fatal(err)
	}
	return rec.Worker
}

// An offline worker's beat brings it back, and a beat that repeats the
// inventory in another order writes nothing.
func TestBeatBringsAnOfflineWorkerBack(t *testing.T) {
	r := newRig(t, register("w1", gpu("GPU-1"), gpu("GPU-2")), offline("w1"))
	a, err := r.handler().Beat(t.Context(), Beat{WorkerID: "w1", Devices: []command.Device{gpu("GPU-2"), gpu("GPU-1")}, Executors: []string{"exec"}, Now: t0.Add(2 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != state.WorkerReady || worker(t, r.s, "w1").Status != state.WorkerReady {
		t.Fatalf("answered %q, stored %q; want ready", a.Status, worker(t, r.s, "w1").Status)
	}
	if got := worker(t, r.s, "w1").Devices; got[0].UUID != "GPU-1" {
		t.Fatalf("a reordered inventory was written: %v", got)
	}
}

// A drain that commits between the beat's read (offline) and its write
// (ready) refuses the write; the beat answers drain, as the worker now
// is, where it used to drop the refusal and answer no command.
func TestBeatAnswersAsTheWorkerIsAfterARefusedWrite(t *testing.T) {
	r := newRig(t, register("w1", gpu("GPU-1")), offline("w1"))
	r.meanwhile["SetWorkerStatus"] = command.ControlWorker{WorkerID: "w1", Action: command.ActionDrain, Deadline: t0.Add(time.Hour), By: "admin", Now: t0.Add(time.Second)}
	a, err := r.handler().Beat(t.Context(), Beat{WorkerID: "w1", Now: t0.Add(2 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != state.WorkerDraining {
		t.Fatalf("answered %q; want draining", a.Status)
	}
}

// A worker revoked between the read and the write is answered as
// revoked (the record stays), not as ready; an unknown worker is an
// error.
func TestBeatOfARevokedOrUnknownWorker(t *testing.T) {
	r := newRig(t, register("w1"), offline("w1"))
	r.meanwhile["SetWorkerStatus"] = command.RevokeWorker{WorkerID: "w1", By: "admin", Now: t0.Add(time.Second)}
	a, err := r.handler().Beat(t.Context(), Beat{WorkerID: "w1", Now: t0.Add(2 * time.Second)})
	if err != nil || a.Status != "revoked" {
		t.Fatalf("a worker revoked meanwhile: answered %q, %v; want revoked", a.Status, err)
	}
	if _, err := r.handler().Beat(t.Context(), Beat{WorkerID: "nobody", Now: t0}); !errors.Is(err, state.ErrNotFound) && !errors.Is(err, state.ErrWorkerNotRegistered) {
		t.Fatalf("beat of an unknown worker: %v", err)
	}
}

// A changed inventory is written, and the answer is about the worker as
// the write left it.
func TestBeatWritesAChangedInventory(t *testing.T) {
	r := newRig(t, register("w1", gpu("GPU-1")))
	a, err := r.handler().Beat(t.Context(), Beat{WorkerID: "w1", Devices: []command.Device{gpu("GPU-1"), gpu("GPU-2")}, MaxTasks: 4, Now: t0.Add(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	wk := worker(t, r.s, "w1")
	if len(wk.Devices) != 2 || wk.MaxTasks != 4 || a.Status != state.WorkerReady {
		t.Fatalf("stored %d devices, max tasks %d; answered %q", len(wk.Devices), wk.MaxTasks, a.Status)
	}
}

// The worker is told to cancel the tasks whose cancel was asked and the
// ones it runs that are not (any longer) its own; the lease manager
// renews what it reports running.
func TestBeatListsWhatToCancel(t *testing.T) {
	r := newRig(t, register("w1", gpu("GPU-1")),
		command.SubmitJob{JobID: "j", TaskIDs: []string{"j-0", "j-1"}, Spec: command.JobSpec{Executor: "exec", Config: []byte(`{}`), Count: 2, MaxAttempts: 1}, CreatedBy: "admin", Now: t0},
		command.AssignTask{TaskID: "j-0", WorkerID: "w1", AttemptID: "a0", LeaseSeconds: 30, Now: t0},
		command.AssignTask{TaskID: "j-1", WorkerID: "w1", AttemptID: "a1", LeaseSeconds: 30, Now: t0},
		command.StartTask{TaskID: "j-0", WorkerID: "w1", AttemptID: "a0", Now: t0},
		command.CancelJob{JobID: "j", By: "admin", Now: t0.Add(time.Second)},
	)
	a, err := r.handler().Beat(t.Context(), Beat{WorkerID: "w1", Running: []string{"j-0", "stray"}, Now: t0.Add(2 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(a.Cancel)
	if !slices.Equal(a.Cancel, []string{"j-0", "j-1", "stray"}) {
		t.Fatalf("cancel %v: want both cancelled tasks (running and assigned) and the stray one", a.Cancel)
	}
	if got := r.leases.renewed["w1"]; !slices.Equal(got, []string{"j-0", "stray"}) || !a.LeaseExpiresAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("renewed %v until %v", got, a.LeaseExpiresAt)
	}
	if len(a.Preempt) != 0 {
		t.Fatalf("cancelled tasks listed as preempted: %v", a.Preempt)
	}
}

// A task preempted for another task is listed to stop and as
// preempted, so that its agent gives it its job's preemption grace; one
// stopped by its worker's stop only to stop (the agent's stop grace).
func TestBeatListsWhatIsPreempted(t *testing.T) {
	job := func(id, team string, gpus int) command.SubmitJob {
		return command.SubmitJob{JobID: id, TaskIDs: []string{id + "-0"}, Team: team, CreatedBy: "admin", Now: t0,
			Spec: command.JobSpec{Executor: "exec", Config: []byte(`{}`), Count: 1, MaxAttempts: 1, Resources: &command.Resources{GPUs: gpus}}}
	}
	r := newRig(t, register("w1", gpu("GPU-1")), register("w2", gpu("GPU-2")),
		command.CreateTeam{Name: "ml", Settings: command.TeamSettings{WeightCenti: 100}, By: "admin", Now: t0},
		command.CreateTeam{Name: "research", Settings: command.TeamSettings{WeightCenti: 100, QuotaCentiGPUs: 100}, By: "admin", Now: t0},
		job("m", "ml", 1), job("d", "ml", 1),
		command.AssignTask{TaskID: "m-0", WorkerID: "w1", AttemptID: "a0", Devices: []string{"GPU-1"}, LeaseSeconds: 30, Now: t0},
		command.StartTask{TaskID: "m-0", WorkerID: "w1", AttemptID: "a0", Now: t0},
		command.AssignTask{TaskID: "d-0", WorkerID: "w2", AttemptID: "a1", Devices: []string{"GPU-2"}, LeaseSeconds: 30, Now: t0},
		command.StartTask{TaskID: "d-0", WorkerID: "w2", AttemptID: "a1", Now: t0},
		command.ControlWorker{WorkerID: "w2", Action: command.ActionStop, By: "admin", Now: t0.Add(time.Second)},
		job("r", "research", 1),
		command.PreemptTasks{For: "r-0", WorkerID: "w1", Victims: []command.Victim{{TaskID: "m-0", AttemptID: "a0"}}, HoldUntil: t0.Add(time.Minute), Now: t0.Add(time.Second)},
	)
	for _, c := range []struct {
		worker, task string
		preempt      bool
	}{{"w1", "m-0", true}, {"w2", "d-0", false}} {
		a, err := r.handler().Beat(t.Context(), Beat{WorkerID: c.worker, Running: []string{c.task}, Now: t0.Add(2 * time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a.Cancel, []string{c.task}) || slices.Contains(a.Preempt, c.task) != c.preempt {
			t.Fatalf("%s: cancel %v, preempt %v: want %s to stop, preempted %v", c.worker, a.Cancel, a.Preempt, c.task, c.preempt)
		}
	}
}
