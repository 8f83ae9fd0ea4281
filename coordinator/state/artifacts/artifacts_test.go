package artifacts

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/stateerr"
)

var t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// A worker's upload is readable by the team it is charged to only once a
// task of that team's job reports it; a report naming a digest the
// worker never uploaded does not grant it.
func TestUploadsGrantAndCharge(t *testing.T) {
	tb := New()
	up := command.RecordArtifact{Digest: "d1", Size: 10, By: "w1", WorkerID: "w1", NodeID: "n1", Scoped: true, ChargeTeam: "vision", Now: t0}
	out, nodes, err := tb.Record(up)
	if err != nil || !out.Created || fmt.Sprint(nodes) != "[n1]" {
		t.Fatalf("record: %+v %v %v", out, nodes, err)
	}
	if _, _, err := tb.Record(command.RecordArtifact{Digest: "d1", Size: 11, Now: t0}); !errors.Is(err, stateerr.ErrConflict) {
		t.Fatalf("another size: %v", err)
	}
	arts := []command.TaskArtifact{{SHA256: "d1", Path: "out", Size: 10}}
	if err := tb.CheckRecorded(arts); err != nil {
		t.Fatal(err)
	}
	if err := tb.CheckRecorded([]command.TaskArtifact{{SHA256: "d1", Path: "out", Size: 9}}); !errors.Is(err, stateerr.ErrInvalid) {
		t.Fatalf("a wrong size: %v", err)
	}
	if err := tb.Proves(arts, "vision", "w2"); !errors.Is(err, stateerr.ErrInvalid) {
		t.Fatalf("a worker naming what it did not upload: %v", err)
	}
	if err := tb.Proves(arts, "vision", "w1"); err != nil {
		t.Fatal(err)
	}
	tb.Grant("d1", "vision", "w1")
	if !tb.ReadableBy("d1", "vision") || tb.ReadableBy("d1", command.DefaultTeam) || tb.BytesOfTeam("vision") != 10 {
		t.Fatalf("after the grant: %+v", tb.Where(func(*Artifact) bool { return true }))
	}
	tb.Release("d1", "vision", func() bool { return true })
	if tb.BytesOfTeam("vision") != 10 {
		t.Fatal("released while another task keeps it")
	}
	tb.Release("d1", "vision", func() bool { return false })
	if tb.BytesOfTeam("vision") != 0 || tb.BytesBy("w1") != 10 {
		t.Fatalf("after the release: %v %d", tb.BytesByTeam(), tb.BytesBy("w1"))
	}
}

// Holders change only with the record's size; collection keeps what is
// named or recent.
func TestHoldersAndCollection(t *testing.T) {
	tb := New()
	for _, d := range []string{"a", "b", "c"} {
		if _, _, err := tb.Record(command.RecordArtifact{Digest: d, Size: 1, NodeID: "n1", Now: t0}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, _, err := tb.SetHolder(command.SetArtifactHolder{Digest: "zz", NodeID: "n2", Held: true, Size: 1}); !errors.Is(err, stateerr.ErrNotFound) {
		t.Fatalf("a digest without a record: %v", err)
	}
	if _, _, _, err := tb.SetHolder(command.SetArtifactHolder{Digest: "a", NodeID: "n2", Held: true, Size: 2}); !errors.Is(err, stateerr.ErrConflict) {
		t.Fatalf("another size: %v", err)
	}
	if _, kind, changed, err := tb.SetHolder(command.SetArtifactHolder{Digest: "a", NodeID: "n2", Held: true, Size: 1}); err != nil || !changed || kind != "artifact.holder_added" {
		t.Fatalf("add a holder: %s %v %v", kind, changed, err)
	}
	if _, _, changed, _ := tb.SetHolder(command.SetArtifactHolder{Digest: "a", NodeID: "n2", Held: true, Size: 1}); changed {
		t.Fatal("a holder added twice")
	}
	if tb.HeldCount("n2") != 1 || tb.HeldCount("n1") != 3 {
		t.Fatalf("held: %d %d", tb.HeldCount("n2"), tb.HeldCount("n1"))
	}
	n, more := tb.Collect(map[string]bool{"b": true}, t0, 1)
	if n != 1 || !more || tb.Has("a") || !tb.Has("b") || !tb.Has("c") {
		t.Fatalf("collect: %d %v", n, more)
	}
	if n, _ := tb.Collect(nil, t0.Add(-time.Hour), 0); n != 0 {
		t.Fatalf("collected %d uploaded after the cutoff", n)
	}
}
