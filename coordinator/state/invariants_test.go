package state

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/creds"
)

// consistent is a state with a task running (j1-a on w1), one pending
// (j1-b), and a job submitted under an idempotency key (j2).
func consistent(t *testing.T) *Store {
	t.Helper()
	s := New()
	keyed := submit("j2", 1, 0)
	keyed.Spec.IdempotencyKey = "k"
	mustApply(t, s,
		command.ImportBootstrap{Generation: 1, Credentials: []command.CredentialRecord{{ID: "adm", Kind: "client", Name: "admin", Roles: []string{"admin"}, Hash: "x"}}, Now: at(0)},
		register("w1", "GPU-1"),
		submit("j1", 2, 0),
		command.AssignTask{TaskID: "j1-a", WorkerID: "w1", AttemptID: "a1", Now: at(2)},
		command.StartTask{TaskID: "j1-a", WorkerID: "w1", AttemptID: "a1", Now: at(3)},
		keyed,
	)
	return s
}

// contradictions spoil a consistent state the way a crafted snapshot
// would, each with what the refusal must name. Before the check, every
// one restored, and the commands after it panicked the FSM or left the
// store unable to go on (finding 1 of the third review).
var contradictions = []struct {
	name  string
	spoil func(s *Store)
	want  string
}{
	{"job lists a task the snapshot lacks", func(s *Store) {
		j := s.jobs.Get("j1")
		j.TaskIDs = append(j.TaskIDs, "j1-z")
	}, "job j1 lists task j1-z, which the snapshot lacks"},
	{"job lists a task the snapshot lacks before its own", func(s *Store) {
		j := s.jobs.Get("j1")
		j.TaskIDs = append([]string{"j1-z"}, j.TaskIDs...)
	}, "job j1 lists task j1-z, which the snapshot lacks"},
	{"task its job does not list", func(s *Store) { s.jobs.Get("j1").TaskIDs = []string{"j1-a"} }, "task j1-b of job j1, which does not list it"},
	{"job lists another job's task", func(s *Store) {
		j := s.jobs.Get("j2")
		j.TaskIDs = append(j.TaskIDs, "j1-b")
	}, "job j2 lists task j1-b of job j1"},
	{"job lists a task twice", func(s *Store) { s.jobs.Get("j1").TaskIDs = []string{"j1-a", "j1-b", "j1-a"} }, "job j1 lists task j1-a twice"},
	{"running task without an attempt", func(s *Store) { s.tasks.Get("j1-a").Attempts = nil }, "task j1-a is running with no attempt"},
	{"running task under another attempt", func(s *Store) { s.tasks.Get("j1-a").AttemptID = "forged" }, `task j1-a is running under attempt "forged", its last attempt is "a1"`},
	{"running task held by another worker than its attempt", func(s *Store) { s.tasks.Get("j1-a").WorkerID = "w9" }, `task j1-a is held by worker "w9", its attempt by "w1"`},
	{"running task on a worker the snapshot lacks", func(s *Store) {
		delete(s.workers, "w1")
	}, "task j1-a is running on worker w1, which the snapshot lacks"},
	{"task in an unknown state", func(s *Store) { s.tasks.Get("j1-b").State = "exploded" }, `task j1-b is in unknown state "exploded"`},
	{"task sequence past the store's", func(s *Store) { s.tasks.Get("j1-b").Seq = 1 << 40 }, "task j1-b has sequence 1099511627776, past the store's"},
	{"job sequence past the store's", func(s *Store) { s.jobs.Get("j2").Seq = 1 << 40 }, "job j2 has sequence 1099511627776, past the store's"},
	{"jobs out of order", func(s *Store) { s.jobs.Get("j2").Seq = 1 }, "job j2 has sequence 1, not after the job before it"},
	{"idempotency key naming a job the snapshot lacks", func(s *Store) { s.idempotency.Set("admin/gone", "j9") }, `idempotency key "admin/gone" names job j9, which the snapshot lacks`},
	{"credential of an unknown kind", func(s *Store) { mustCred(s, "adm").Kind = "root" }, `credential adm is of unknown kind "root"`},
	{"credential without a hash", func(s *Store) { mustCred(s, "adm").Hash = "" }, "credential adm has no hash"},
	{"worker credential naming no worker", func(s *Store) { mustCred(s, "cred-w1").WorkerID = "" }, "worker credential cred-w1 names no worker"},
	{"worker in an unknown status", func(s *Store) { s.workers["w1"].Status = "root" }, `worker w1 is in unknown status "root"`},
}

// A snapshot whose records contradict each other is refused before it
// replaces anything, naming the first contradiction; the state stays as
// it was.
func TestRestoreRefusesContradictions(t *testing.T) {
	for _, c := range contradictions {
		t.Run(c.name, func(t *testing.T) {
			src := consistent(t)
			c.spoil(src)
			snap := snapshotBytes(t, src)

			into := consistent(t)
			mustApply(t, into, submit("kept", 1, 0))
			before := snapshotBytes(t, into)
			err := into.Restore(bytes.NewReader(snap))
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("restore: %v\nwant ErrInvalid naming %q", err, c.want)
			}
			if !bytes.Equal(snapshotBytes(t, into), before) {
				t.Fatal("a refused snapshot changed the state")
			}
		})
	}
}

// The unspoilt state restores: the check refuses contradictions only.
func TestRestoreTakesConsistentState(t *testing.T) {
	snap := snapshotBytes(t, consistent(t))
	into := New()
	if err := into.Restore(bytes.NewReader(snap)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(snapshotBytes(t, into), snap) {
		t.Fatal("restored state snapshots differently")
	}
}

// A command that meets state contradicting itself (which a restore now
// refuses, but which a bug could still leave) is refused with
// ErrCorruptState instead of panicking the FSM, which would stop the
// node on every replay of the log.
func TestApplyRefusesInsteadOfPanicking(t *testing.T) {
	cases := []struct {
		name  string
		spoil func(s *Store)
		cmd   command.Command
	}{
		{"cancel a job listing a missing task", func(s *Store) {
			j := s.jobs.Get("j1")
			j.TaskIDs = append(j.TaskIDs, "j1-z")
		}, command.CancelJob{JobID: "j1", By: "admin", Now: at(5)}},
		{"resubmit under a key naming a missing job", func(s *Store) { s.idempotency.Set("admin/k", "j9") },
			command.SubmitJob{JobID: "j3", TaskIDs: []string{"j3-a"}, CreatedBy: "admin", Now: at(5),
				Spec: command.JobSpec{Executor: "exec", Config: []byte(`{}`), Count: 1, IdempotencyKey: "k"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := consistent(t)
			c.spoil(s)
			if err := apply(t, s, c.cmd).Err(); !errors.Is(err, ErrCorruptState) {
				t.Fatalf("apply: %v, want %v", err, ErrCorruptState)
			}
		})
	}
}

// mustCred is the stored credential id, to corrupt in place.
func mustCred(s *Store, id string) *creds.Credential {
	c, ok := s.credentials.Get(id)
	if !ok {
		panic("no credential " + id)
	}
	return c
}
