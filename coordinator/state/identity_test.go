package state

import (
	"errors"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/sdk/api"
)

func TestIdentityScenarioOutcomes(t *testing.T) {
	s := New()
	var results []Result
	for _, c := range identityScenario() {
		results = append(results, apply(t, s, c))
	}
	for i, want := range map[int]error{5: ErrCycleDetected, 15: ErrConflict, 18: ErrConflict} {
		if !errors.Is(results[i].Err(), want) {
			t.Errorf("command %d (%T): %v, want %v", i, identityScenario()[i], results[i].Err(), want)
		}
	}
	for i, r := range results {
		if r.Err() != nil && i != 5 && i != 15 && i != 18 {
			t.Errorf("command %d (%T) refused: %v", i, identityScenario()[i], r.Err())
		}
	}
}

func TestReissueKeepsClaims(t *testing.T) {
	s := New()
	mustApply(t, s, register("w1"), submit("j", 1, 0),
		command.AssignTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "a1", Now: at(2)})
	r := apply(t, s, command.ReissueWorker{WorkerID: "w1", Credential: command.CredentialRecord{ID: "cred-w1-2", Kind: "worker", Hash: "h2"}, By: "admin", Now: at(3)})
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	if w, _ := s.WorkerAuthInfo("w1"); w.CredentialID != "cred-w1-2" {
		t.Fatalf("live credential %s", w.CredentialID)
	}
	if old, _ := s.Credential("cred-w1"); !old.Revoked {
		t.Fatal("the old credential is still live")
	}
	if nw, _ := s.Credential("cred-w1-2"); nw.WorkerID != "w1" || nw.Revoked {
		t.Fatalf("new credential %+v", nw)
	}
	if held, ok := s.HeldAttempt("j-a", "w1"); !ok || held != "a1" {
		t.Fatal("reissue dropped the worker's claim")
	}
	mustApply(t, s, command.FinishTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "a1", Now: at(4)})

	for name, c := range map[string]struct {
		cmd  command.ReissueWorker
		want error
	}{
		"unknown worker": {command.ReissueWorker{WorkerID: "ghost", Credential: command.CredentialRecord{ID: "c9", Hash: "h"}}, ErrNotFound},
		"id collision":   {command.ReissueWorker{WorkerID: "w1", Credential: command.CredentialRecord{ID: "cred-w1", Hash: "h"}}, ErrConflict},
		"no credential":  {command.ReissueWorker{WorkerID: "w1"}, ErrInvalid},
	} {
		if r := apply(t, s, c.cmd); !errors.Is(r.Err(), c.want) {
			t.Errorf("%s: %v, want %v", name, r.Err(), c.want)
		}
	}
}

func TestRevokeRequeuesActiveTasks(t *testing.T) {
	s := New()
	last := submit("last", 1, 0)
	last.Spec.MaxAttempts = 1
	mustApply(t, s, register("w1", "GPU-1"), register("w2", "GPU-2"), submit("j", 2, 0), last,
		command.AssignTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "a1", Now: at(2)},
		command.AssignTask{TaskID: "j-b", WorkerID: "w1", AttemptID: "a2", Now: at(2)},
		command.StartTask{TaskID: "j-b", WorkerID: "w1", AttemptID: "a2", Now: at(3)},
		command.AssignTask{TaskID: "last-a", WorkerID: "w1", AttemptID: "a3", Now: at(3)},
	)
	r := apply(t, s, command.RevokeWorker{WorkerID: "w1", By: "admin", Now: at(4)})
	if w, err := OutcomeOf[WorkerRecord](r); err != nil || w.Worker.Status != api.WorkerRevoked {
		t.Fatalf("revoke: %+v", r)
	}
	for _, id := range []string{"j-a", "j-b"} {
		task, _ := s.Task(id)
		if task.State != api.TaskPending || task.WorkerID != "" || task.Attempts[0].State != api.AttemptLost || task.Attempts[0].WorkerID != "w1" {
			t.Errorf("%s after revoke: %+v", id, task)
		}
	}
	if task, _ := s.Task("last-a"); task.State != api.TaskFailed {
		t.Errorf("task at its last attempt: %s, want failed", task.State)
	}
	if got := s.ActiveTasks("w1"); len(got) != 0 {
		t.Errorf("w1 still holds %+v", got)
	}
	if c, _ := s.Credential("cred-w1"); !c.Revoked {
		t.Error("revoked worker's credential is live")
	}
	if _, _, err := s.Match("w1", "", nil); !errors.Is(err, ErrWorkerRevoked) {
		t.Errorf("match for a revoked worker: %v", err)
	}
	if r := apply(t, s, command.StartTask{TaskID: "j-b", WorkerID: "w1", AttemptID: "a2", Now: at(5)}); !errors.Is(r.Err(), ErrStaleAttempt) {
		t.Errorf("revoked worker's old attempt: %v, want stale_attempt", r.Err())
	}
	if c, ok, _ := s.Match("w2", "", nil); !ok || c.TaskID != "j-a" {
		t.Errorf("another worker does not get the requeued task: %+v", c)
	}
	if r := apply(t, s, command.RevokeWorker{WorkerID: "w1", Now: at(6)}); r.Err() != nil {
		t.Errorf("revoking twice: %v", r.Err())
	}
	if r := apply(t, s, command.RevokeWorker{WorkerID: "ghost", Now: at(6)}); !errors.Is(r.Err(), ErrNotFound) {
		t.Errorf("revoking an unknown worker: %v", r.Err())
	}
}
