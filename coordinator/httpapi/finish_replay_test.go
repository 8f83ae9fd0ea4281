package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// A finish replayed under its submission id answers what the first one
// answered, byte for byte: the state keeps the task as the finish left
// it, this package renders it, on this store and on one restored from
// its snapshot.
func TestReplayedFinishAnswersTheSameBytes(t *testing.T) {
	at := func(s int) time.Time { return time.Date(2026, 12, 2, 13, 0, s, 123456789, time.UTC) }
	s := state.New()
	for _, c := range []command.Command{
		command.RegisterWorker{WorkerID: "w1", Credential: command.CredentialRecord{ID: "c1", Kind: "worker", Hash: "h"}, Executors: []string{"exec"}, Capabilities: []string{"*"}, Now: at(0)},
		command.SubmitJob{JobID: "j", TaskIDs: []string{"j-0"}, Spec: command.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`), MaxAttempts: 1}, CreatedBy: "ci", Now: at(1)},
		command.AssignTask{TaskID: "j-0", WorkerID: "w1", AttemptID: "a1", Now: at(2)},
		command.StartTask{TaskID: "j-0", WorkerID: "w1", AttemptID: "a1", Now: at(3)},
	} {
		if err := s.Apply(c).(state.Result).Err(); err != nil {
			t.Fatalf("%T: %v", c, err)
		}
	}
	finish := command.FinishTask{TaskID: "j-0", WorkerID: "w1", AttemptID: "a1", SubmissionID: "s1", BodyHash: "b1",
		ExitCode: 3, Reason: "oom <killed>", Output: json.RawMessage(`{ "loss" : 0.25, "note": "a<b & c" }`), Now: at(4)}
	answer := func(s *state.Store, now int) []byte {
		t.Helper()
		f := finish
		f.Now = at(now) // a replay is stamped later; its answer is not
		task, err := state.OutcomeOf[state.Task](s.Apply(f).(state.Result))
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		taskAnswer(rec, task)
		return rec.Body.Bytes()
	}
	first := answer(s, 4)
	var v api.TaskResponse
	if err := json.Unmarshal(first, &v); err != nil || v.Task.State != api.TaskFailed || v.Task.ExitCode == nil || *v.Task.ExitCode != 3 {
		t.Fatalf("first answer %s: %v", first, err)
	}
	var snap bytes.Buffer
	if err := s.Snapshot(&snap); err != nil {
		t.Fatal(err)
	}
	restored := state.New()
	if err := restored.Restore(&snap); err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string][]byte{
		"replay":                 answer(s, 9),
		"replay after a restore": answer(restored, 10),
	} {
		if !bytes.Equal(got, first) {
			t.Errorf("%s answered\n%s\nthe first finish\n%s", name, got, first)
		}
	}
	if _, err := state.OutcomeOf[state.Task](s.Apply(command.FinishTask{TaskID: "j-0", WorkerID: "w1", AttemptID: "a1", SubmissionID: "s1", BodyHash: "other", Now: at(11)}).(state.Result)); err == nil {
		t.Error("the same submission id with another body was answered, want a conflict")
	}
}
