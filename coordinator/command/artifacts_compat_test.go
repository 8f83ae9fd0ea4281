package command

import (
	"strings"
	"testing"
)

// Log entries written before artifacts had paths carry bare digests: they
// decode, as objects with the digest alone, and ask for no check.
func TestOlderArtifactEntriesDecode(t *testing.T) {
	d := strings.Repeat("ab", 32)
	cases := []struct {
		name  string
		entry []byte
		check func(Command) bool
	}{
		{"finish with bare digests", append([]byte{byte(TypeFinishTask)}, `{"task_id":"t","attempt_id":"a","exit_code":0,"artifacts":["`+d+`"],"now":"2026-01-02T03:04:05Z"}`...),
			func(c Command) bool {
				f := c.(FinishTask)
				return len(f.Artifacts) == 1 && f.Artifacts[0].SHA256 == d && f.Artifacts[0].Path == "" && !f.RequireRecorded
			}},
		{"job with bare input digests", append([]byte{byte(TypeSubmitJob)}, `{"job_id":"j","task_ids":["j-0"],"spec":{"executor":"exec","inputs":["`+d+`"]},"now":"2026-01-02T03:04:05Z"}`...),
			func(c Command) bool {
				in := c.(SubmitJob).Spec.Inputs
				return len(in) == 1 && in[0].SHA256 == d && in[0].StagePath() == "inputs/"+d
			}},
		{"artifact recorded on one node", append([]byte{byte(TypeRecordArtifact)}, `{"digest":"`+d+`","size":3,"node_id":"c1","by":"admin","now":"2026-01-02T03:04:05Z"}`...),
			func(c Command) bool {
				r := c.(RecordArtifact)
				return r.NodeID == "c1" && len(r.Holders) == 0 && !r.Touch
			}},
		{"collection before artifacts were collected", append([]byte{byte(TypeCollectGarbage)}, `{"now":"2026-01-02T03:04:05Z","older_than":0,"by":"retention"}`...),
			func(c Command) bool { return !c.(CollectGarbage).Artifacts }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd, err := Decode(c.entry)
			if err != nil {
				t.Fatal(err)
			}
			if !c.check(cmd) {
				t.Fatalf("decoded %+v", cmd)
			}
		})
	}
}
