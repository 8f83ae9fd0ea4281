package fsm_test

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/fsm"
	"github.com/gpulayer/gpulayer/coordinator/state"
)

func apply(t *testing.T, f *fsm.FSM, c command.Command) {
	t.Helper()
	b, err := command.Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	if res, ok := f.Apply(&raft.Log{Type: raft.LogCommand, Data: b}).(state.Result); !ok || res.Err() != nil {
		t.Fatalf("%T: %v", c, res.Err())
	}
}

// Persist, running while the FSM applies later commands as Raft lets it,
// writes the state as it was when Snapshot was called; Restore reads it
// back to the same state.
func TestPersistWritesTheStateOfTheSnapshotPoint(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f := fsm.New(state.New())
	job := func(id string) command.SubmitJob {
		return command.SubmitJob{JobID: id, TaskIDs: []string{id + "-0"}, CreatedBy: "admin", Now: now,
			Spec: command.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`), Count: 1}}
	}
	apply(t, f, command.RegisterWorker{WorkerID: "w1", Credential: command.CredentialRecord{ID: "c1", Kind: "worker", Hash: "h"}, Capabilities: []string{"*"}, Executors: []string{"exec"}, Devices: []command.Device{}, Now: now})
	apply(t, f, job("j1"))
	apply(t, f, command.AssignTask{TaskID: "j1-0", WorkerID: "w1", AttemptID: "a1", Now: now})

	var want bytes.Buffer
	if err := fsm.Save(f.Store(), &want); err != nil {
		t.Fatal(err)
	}
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Release()
	done := make(chan error)
	var got bytes.Buffer
	sk := &sink{Buffer: &got}
	go func() { done <- snap.Persist(sk) }()
	apply(t, f, command.StartTask{TaskID: "j1-0", WorkerID: "w1", AttemptID: "a1", Now: now.Add(time.Second)})
	apply(t, f, command.FinishTask{TaskID: "j1-0", WorkerID: "w1", AttemptID: "a1", Now: now.Add(2 * time.Second)})
	apply(t, f, job("j2"))
	if err := <-done; err != nil || !sk.closed {
		t.Fatalf("persist: %v, sink closed %v", err, sk.closed)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatal("Persist wrote commands applied after Snapshot")
	}

	r := fsm.New(state.New())
	if err := r.Restore(io.NopCloser(bytes.NewReader(got.Bytes()))); err != nil {
		t.Fatal(err)
	}
	var back bytes.Buffer
	if err := fsm.Save(r.Store(), &back); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back.Bytes(), want.Bytes()) {
		t.Fatal("restore of a persisted snapshot holds another state")
	}
}

// sink is a raft.SnapshotSink into a buffer.
type sink struct {
	*bytes.Buffer
	closed bool
}

func (s *sink) Close() error  { s.closed = true; return nil }
func (s *sink) Cancel() error { return nil }
func (s *sink) ID() string    { return "test" }
