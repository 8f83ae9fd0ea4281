package state

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/artifacts"
	"github.com/gpulayer/gpulayer/coordinator/state/audit"
)

// SetArtifactHolder adds a holder only with the record's size, drops one,
// never creates a record, and audits each change (and only changes). A
// snapshot taken before a drop keeps its holders.
func TestSetArtifactHolder(t *testing.T) {
	s := New()
	d := dg("a")
	mustApply(t, s, command.RecordArtifact{Digest: d, Size: 3, NodeID: "n1", Holders: []string{"n3"}, By: "admin", Now: at(1)})
	capture := s.Capture()
	before := snapshotBytes(t, s)

	steps := []struct {
		name    string
		cmd     command.SetArtifactHolder
		err     error
		holders []string
	}{
		{"a copy verified on n2", command.SetArtifactHolder{Digest: d, NodeID: "n2", Held: true, Size: 3, Reason: "copied", By: "repair", Now: at(2)}, nil, []string{"n1", "n2", "n3"}},
		{"added again: no change", command.SetArtifactHolder{Digest: d, NodeID: "n2", Held: true, Size: 3, By: "repair", Now: at(3)}, nil, []string{"n1", "n2", "n3"}},
		{"a copy of another size", command.SetArtifactHolder{Digest: d, NodeID: "n4", Held: true, Size: 4, By: "repair", Now: at(3)}, ErrConflict, []string{"n1", "n2", "n3"}},
		{"n3 lost its copy", command.SetArtifactHolder{Digest: d, NodeID: "n3", Reason: "missing", By: "n3", Now: at(4)}, nil, []string{"n1", "n2"}},
		{"dropped again: no change", command.SetArtifactHolder{Digest: d, NodeID: "n3", Reason: "missing", By: "n3", Now: at(5)}, nil, []string{"n1", "n2"}},
		{"no node", command.SetArtifactHolder{Digest: d, Held: true, Size: 3, Now: at(5)}, ErrInvalid, []string{"n1", "n2"}},
		{"the last holders go", command.SetArtifactHolder{Digest: d, NodeID: "n1", Reason: "damaged", By: "n1", Now: at(6)}, nil, []string{"n2"}},
		{"n3 fetched it back", command.SetArtifactHolder{Digest: d, NodeID: "n3", Held: true, Size: 3, Reason: "fetched", By: "n3", Now: at(7)}, nil, []string{"n2", "n3"}},
	}
	for _, st := range steps {
		_, err := OutcomeOf[artifacts.Outcome](apply(t, s, st.cmd))
		if !errors.Is(err, st.err) || (st.err == nil) != (err == nil) {
			t.Fatalf("%s: %v, want %v", st.name, err, st.err)
		}
		if a, _ := s.Artifact(d); !slices.Equal(a.Holders, st.holders) {
			t.Fatalf("%s: holders %v, want %v", st.name, a.Holders, st.holders)
		}
	}
	for _, node := range []string{"n1", "n2", "n3"} {
		held := s.ArtifactsHeldBy(node)
		want := node != "n1"
		if (len(held) == 1) != want || s.ArtifactsHeldCount(node) != len(held) {
			t.Errorf("%s holds %d records, counted %d", node, len(held), s.ArtifactsHeldCount(node))
		}
	}
	if _, err := OutcomeOf[artifacts.Outcome](apply(t, s, command.SetArtifactHolder{Digest: dg("b"), NodeID: "n1", Held: true, Size: 3, Now: at(8)})); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a holder of a digest without a record: %v, want ErrNotFound", err)
	}
	if s.HasArtifact(dg("b")) {
		t.Fatal("adding a holder created a record")
	}
	var kinds []string
	for _, ev := range s.Audit(audit.Filter{Kinds: []string{"artifact"}}) {
		kinds = append(kinds, ev.Kind+" "+ev.Detail)
	}
	want := []string{"artifact.stored 3 bytes on n1,n3", "artifact.holder_added n2: copied", "artifact.holder_dropped n3: missing",
		"artifact.holder_dropped n1: damaged", "artifact.holder_added n3: fetched"}
	if !slices.Equal(kinds, want) {
		t.Fatalf("audit %q, want %q", kinds, want)
	}
	// What was captured before the changes still says what it said, and
	// the changed holders survive a snapshot.
	var captured bytes.Buffer
	if err := capture.Encode(&captured); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(captured.Bytes(), before) {
		t.Fatal("a capture taken before the holders changed was changed by them")
	}
	restored, _ := roundTrip(t, s)
	if a, _ := restored.Artifact(d); !slices.Equal(a.Holders, []string{"n2", "n3"}) {
		t.Fatalf("restored holders %v", a.Holders)
	}
}
