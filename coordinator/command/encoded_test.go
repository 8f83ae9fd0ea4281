package command

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// EncodeSubmit writes SubmitJob through a struct of its own: a field added
// to SubmitJob and not to submitEntry would be dropped from every entry.
func TestSubmitEntryHasEverySubmitField(t *testing.T) {
	tags := func(typ reflect.Type) map[string]reflect.Type {
		out := map[string]reflect.Type{}
		for f := range typ.Fields() {
			out[f.Tag.Get("json")] = f.Type
		}
		return out
	}
	job, entry := tags(reflect.TypeFor[SubmitJob]()), tags(reflect.TypeFor[submitEntry]())
	if len(job) != len(entry) {
		t.Fatalf("SubmitJob has %d fields, submitEntry %d", len(job), len(entry))
	}
	for tag, typ := range job {
		got, ok := entry[tag]
		switch {
		case !ok:
			t.Errorf("submitEntry lacks %q", tag)
		case tag == `spec`:
		case got != typ:
			t.Errorf("%q is %v in SubmitJob, %v in submitEntry", tag, typ, got)
		}
	}
}

func TestEncodeSubmitDecodesAsTheSubmit(t *testing.T) {
	c := SubmitJob{JobID: "j1", TaskIDs: []string{"j1-0", "j1-1"}, CreatedBy: "ci", Now: time.Unix(7, 9).UTC(), MaxPendingJobs: 3,
		Spec: JobSpec{Executor: "exec", Count: 2, Config: []byte(`{"command":"true"}`), Outputs: []string{"out/*"}, Priority: 4, IdempotencyKey: "k"}}
	enc, size, err := EncodeSubmit(c)
	if err != nil {
		t.Fatal(err)
	}
	if enc.Type() != TypeSubmitJob || size <= 0 {
		t.Fatalf("type %d size %d", enc.Type(), size)
	}
	again, err := Encode(enc)
	if err != nil || string(again) != string(enc.Entry()) {
		t.Fatal("Encode of an Encoded command changed its bytes")
	}
	got, err := enc.Decode()
	if err != nil {
		t.Fatal(err)
	}
	sub := got.(SubmitJob)
	if !strings.HasPrefix(sub.SpecHash, SpecDigestPrefix) || sub.SpecHash != SpecDigest(c.Spec) {
		t.Fatalf("digest %q, want %q", sub.SpecHash, SpecDigest(c.Spec))
	}
	c.SpecHash = sub.SpecHash
	if !reflect.DeepEqual(sub, c) {
		t.Fatalf("decoded %+v\nwant    %+v", sub, c)
	}
	other := c
	other.Spec.Priority = 5
	if SpecDigest(other.Spec) == sub.SpecHash {
		t.Fatal("two specs share a digest")
	}
}
