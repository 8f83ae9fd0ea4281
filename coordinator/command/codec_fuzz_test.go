package command

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// fuzzSeedCommands is the seed corpus of FuzzDecode before encoding: the
// zero value of every command type, so that each type byte starts with a
// body the fuzzer can mutate, and a few filled commands that reach nested
// structs, maps, raw JSON, base64 and times with a zone offset.
func fuzzSeedCommands() []Command {
	now := time.Date(2026, 12, 2, 13, 0, 0, 123000000, time.UTC)
	east := time.Date(2026, 12, 2, 14, 0, 0, 0, time.FixedZone("", 3600))
	var out []Command
	for _, t := range Types() {
		c, err := Decode([]byte{byte(t), '{', '}'})
		if err != nil {
			panic(err)
		}
		out = append(out, c)
	}
	inner := []byte{byte(TypeCancelJob), '{', '}'}
	out = append(out,
		SubmitJob{JobID: "j", TaskIDs: []string{"j-0"}, Spec: JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`),
			Resources: &Resources{GPUs: 1}, Target: &Target{Kind: api.TargetGroup, ID: "g"}, Inputs: []ArtifactRef{{SHA256: "ab"}, {SHA256: "cd", Path: "data/x"}}, Outputs: []string{"out/*"}}, CreatedBy: "admin", Now: now},
		RegisterWorker{WorkerID: "w1", Credential: CredentialRecord{ID: "c", Kind: "worker", Hash: "h", CreatedAt: east, ExpiresAt: now,
			Labels: map[string]string{"zone": "a"}}, Labels: map[string]string{"zone": "a"}, Devices: []Device{{UUID: "GPU-1", Healthy: true}}, Now: now},
		FinishTask{TaskID: "t", WorkerID: "w1", AttemptID: "a1", ExitCode: -1, Output: []byte(`{"loss":0.25,"steps":[1,2]}`), Artifacts: []TaskArtifact{{Path: "out/a", SHA256: "ab", Size: 3}}, RequireRecorded: true, Now: now},
		Batch{Entries: [][]byte{inner, {byte(TypeBatch), '{', '}'}, nil}},
		AppendAudit{Events: []AuditEvent{{Seq: 7, Time: east, Kind: "auth.refused", Count: 3}}},
	)
	return out
}

// FuzzDecode feeds arbitrary bytes to Decode, as a corrupt or hostile
// Raft log entry would. Decode must never panic. An entry it accepts must
// encode again; that encoding must decode, encode to the same bytes (the
// encoding is a fixed point), and decode to a value equal to the first
// decode of it. The entries of a decoded Batch, which Store.Apply decodes
// in turn, are held to the same property.
func FuzzDecode(f *testing.F) {
	for _, c := range fuzzSeedCommands() {
		b, err := Encode(c)
		if err != nil {
			f.Fatalf("%T: %v", c, err)
		}
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add([]byte{byte(TypeInvalid), '{', '}'})
	f.Add([]byte{250, '{', '}'})
	f.Add([]byte{byte(TypeSubmitJob), '{'})
	f.Add([]byte(string(rune(TypeFinishTask)) + `{"task_id":"t","TASK_ID":"u","output":{"a" : 1},"now":"2026-12-02T13:00:00+05:30"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Decode(b)
		if err != nil {
			return
		}
		if c.Type() != Type(b[0]) {
			t.Fatalf("entry with type byte %d decoded to %T (type %d)", b[0], c, c.Type())
		}
		assertCanonical(t, c)
		if batch, ok := c.(Batch); ok {
			for _, e := range batch.Entries {
				if inner, err := Decode(e); err == nil {
					assertCanonical(t, inner)
				}
			}
		}
	})
}

// assertCanonical checks that a decoded command re-encodes to a fixed
// point. The first encoding may differ from the entry it was decoded from
// (spacing inside raw JSON, key case, escapes), but from then on encoding
// and decoding must change nothing.
func assertCanonical(t *testing.T, c Command) {
	t.Helper()
	first, err := Encode(c)
	if err != nil {
		t.Fatalf("%T decoded but does not encode: %v\nvalue: %#v", c, err, c)
	}
	if first[0] != byte(c.Type()) {
		t.Fatalf("%T: encoding starts with %d, want %d", c, first[0], c.Type())
	}
	again, err := Decode(first)
	if err != nil {
		t.Fatalf("%T: its own encoding does not decode: %v\nentry: %q", c, err, first)
	}
	second, err := Encode(again)
	if err != nil {
		t.Fatalf("%T: re-decoded value does not encode: %v", c, err)
	}
	if !bytes.Equal(first, second) {
		t.Fatalf("%T: encoding is not a fixed point:\nfirst  %q\nsecond %q", c, first, second)
	}
	third, err := Decode(second)
	if err != nil {
		t.Fatalf("%T: fixed-point encoding does not decode: %v", c, err)
	}
	if !reflect.DeepEqual(again, third) {
		t.Fatalf("%T: equal encodings decode to different values:\n%#v\n%#v", c, again, third)
	}
}
