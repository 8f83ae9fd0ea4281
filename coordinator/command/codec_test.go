package command

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestRoundTrip(t *testing.T) {
	now := time.Date(2026, 12, 2, 13, 0, 0, 123000000, time.UTC)
	cases := []Command{
		ImportBootstrap{Generation: 2, Credentials: []CredentialRecord{{ID: "a", Kind: "client", Hash: "h", CreatedAt: now}}, Now: now},
		RegisterWorker{WorkerID: "w1", Capabilities: []string{"*"}, Executors: []string{"exec"}, Devices: []Device{{UUID: "GPU-1", Healthy: true}}, Now: now},
		SubmitJob{JobID: "j", TaskIDs: []string{"t"}, Spec: JobSpec{Executor: "exec", Count: 1}, CreatedBy: "admin", Now: now, MaxPendingJobs: 5},
		AssignTask{TaskID: "t", WorkerID: "w1", AttemptID: "a1", Devices: []string{"GPU-1"}, LeaseSeconds: 30, Now: now},
		FinishTask{TaskID: "t", WorkerID: "w1", AttemptID: "a1", SubmissionID: "s", ExitCode: 3, Now: now},
		LoseAttempt{TaskID: "t", AttemptID: "a1", Reason: "lease", Now: now},
		CancelJob{JobID: "j", By: "admin", Now: now},
		PreemptTasks{For: "g-a", WorkerID: "w1", Victims: []Victim{{TaskID: "t", AttemptID: "a1"}, {TaskID: "u", AttemptID: "a2", WorkerID: "w2"}}, MinRuntime: time.Minute, HoldUntil: now, Now: now},
		Batch{Entries: [][]byte{{byte(TypeCancelJob), '{', '}'}}},
	}
	assertRoundTrip(t, cases)
}

// assertRoundTrip encodes and decodes each command as Raft stores it and
// checks that nothing is lost and the type byte leads.
func assertRoundTrip(t *testing.T, cases []Command) {
	t.Helper()
	for _, c := range cases {
		b, err := Encode(c)
		if err != nil {
			t.Fatal(err)
		}
		if b[0] != byte(c.Type()) {
			t.Fatalf("%T: first byte %d, want %d", c, b[0], c.Type())
		}
		got, err := Decode(b)
		if err != nil {
			t.Fatalf("%T: %v", c, err)
		}
		if !reflect.DeepEqual(got, c) {
			t.Fatalf("%T round trip:\n got %#v\nwant %#v", c, got, c)
		}
	}
}

// The numbers are on disk in every Raft log: they must never change, and
// every one must decode.
func TestTypeNumbersArePinned(t *testing.T) {
	pinned := []Type{
		TypeInvalid, TypeBatch, TypeImportBootstrap, TypeRegisterWorker, TypeUpdateWorker,
		TypeSetWorkerStatus, TypeSubmitJob, TypeAssignTask, TypeStartTask, TypeAppendLogs,
		TypeFinishTask, TypeFailTask, TypeLoseAttempt, TypeCancelJob, TypeRegisterNode,
		TypeReissueWorker, TypeRevokeWorker, TypeCreateGroup, TypeAddGroupMember, TypeRemoveGroupMember,
		TypeDeleteGroup, TypeCreateToken, TypeRevokeToken, TypeApproveWorker, TypePutCluster,
		TypeCreateEnrollment, TypeRevokeEnrollment, TypeEnrollWorker, TypeAppendAudit, TypeRecordArtifact,
		TypeCollectGarbage, TypeControlWorker, TypeExpireDrains, TypeClearGPU, TypeAssignGang,
		TypeJoinRendezvous, TypeApproveDevices, TypeSetArtifactHolder, TypeForgetWorker, TypeCordonDevice, TypeCreateTeam, TypeUpdateTeam, TypeDeleteTeam,
		TypePreemptTasks,
		TypeSetMIGLayout,
	}
	if got := Types(); len(got) != len(pinned)-1 {
		t.Errorf("%d types decode, %d are pinned: pin the new ones", len(got), len(pinned)-1)
	}
	for want, typ := range pinned {
		if int(typ) != want {
			t.Errorf("type at position %d has number %d", want, typ)
		}
		if typ == TypeInvalid {
			continue
		}
		if _, ok := decoders[typ]; !ok {
			t.Errorf("type %d has no decoder", typ)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	for name, b := range map[string][]byte{
		"empty":   nil,
		"unknown": {250, '{', '}'},
		"invalid": {0, '{', '}'},
	} {
		if _, err := Decode(b); !errors.Is(err, ErrUnknownType) {
			t.Errorf("%s: got %v, want ErrUnknownType", name, err)
		}
	}
	if _, err := Decode([]byte{byte(TypeSubmitJob), '{'}); err == nil {
		t.Error("truncated JSON decoded without error")
	}
}

// A batch's entries are decoded in order, each on its own: one that does
// not decode, or is a batch itself, carries its error in its place.
func TestUnbatch(t *testing.T) {
	cancel := []byte{byte(TypeCancelJob), '{', '}'}
	nested := []byte{byte(TypeBatch), '{', '}'}
	cases := []struct {
		name  string
		entry []byte
		want  error
	}{
		{"a command", cancel, nil},
		{"an unknown type", []byte{250, '{', '}'}, ErrUnknownType},
		{"an empty entry", nil, ErrUnknownType},
		{"a batch in a batch", nested, ErrNestedBatch},
	}
	b := Batch{}
	for _, c := range cases {
		b.Entries = append(b.Entries, c.entry)
	}
	got := Unbatch(b)
	if len(got) != len(cases) {
		t.Fatalf("%d entries decoded, want %d", len(got), len(cases))
	}
	for i, c := range cases {
		switch {
		case c.want == nil && (got[i].Err != nil || got[i].Command == nil || got[i].Command.Type() != TypeCancelJob):
			t.Errorf("%s: %+v", c.name, got[i])
		case c.want != nil && (!errors.Is(got[i].Err, c.want) || got[i].Command != nil):
			t.Errorf("%s: %+v, want %v", c.name, got[i], c.want)
		}
	}
}

// A PreemptTasks written before victims named their workers decodes
// with every victim on the command's worker.
func TestOlderPreemptTasksDecode(t *testing.T) {
	old := append([]byte{byte(TypePreemptTasks)}, `{"for":"r-a","worker_id":"w1","victims":[{"task_id":"m-a","attempt_id":"a1"}],"min_runtime":0,"now":"2026-12-02T13:00:00Z"}`...)
	got, err := Decode(old)
	if err != nil {
		t.Fatal(err)
	}
	c := got.(PreemptTasks)
	if len(c.Victims) != 1 || c.Victims[0].WorkerID != "" || c.Victims[0].On(c.WorkerID) != "w1" {
		t.Fatalf("decoded %+v", c)
	}
}
