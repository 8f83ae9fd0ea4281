package command

import (
	"strings"
	"testing"
	"time"
)

// SetArtifactHolder round-trips, and its field names are pinned: log
// entries written now must decode the same way in every later release.
func TestSetArtifactHolderEncoding(t *testing.T) {
	now := time.Date(2026, 12, 2, 13, 0, 0, 123000000, time.UTC)
	d := strings.Repeat("ab", 32)
	assertRoundTrip(t, []Command{
		SetArtifactHolder{Digest: d, NodeID: "c2", Held: true, Size: 3, Reason: "copied", By: "repair", Now: now},
		SetArtifactHolder{Digest: d, NodeID: "c3", Reason: "missing", By: "c3", Now: now},
	})
	entry := append([]byte{byte(TypeSetArtifactHolder)}, `{"digest":"`+d+`","node_id":"c2","held":true,"size":3,"reason":"copied","by":"repair","now":"2026-01-02T03:04:05Z"}`...)
	c, err := Decode(entry)
	if err != nil {
		t.Fatal(err)
	}
	got := c.(SetArtifactHolder)
	if got.Digest != d || got.NodeID != "c2" || !got.Held || got.Size != 3 || got.Reason != "copied" || got.By != "repair" || got.Now.IsZero() {
		t.Fatalf("decoded %+v", got)
	}
	drop, err := Decode(append([]byte{byte(TypeSetArtifactHolder)}, `{"digest":"`+d+`","node_id":"c3","by":"c3","now":"2026-01-02T03:04:05Z"}`...))
	if err != nil || drop.(SetArtifactHolder).Held {
		t.Fatalf("an entry without held drops the holder: %+v %v", drop, err)
	}
}
