package groups

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/stateerr"
)

var now = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

func worker(id string) command.GroupMember { return command.GroupMember{Kind: KindWorker, ID: id} }
func group(id string) command.GroupMember  { return command.GroupMember{Kind: KindGroup, ID: id} }
func registered(string) bool               { return true }

// Membership is transitive through nested groups, diamonds counted once,
// and follows every write; a cycle, a missing member and a contained
// group's deletion are refused and change nothing.
func TestMembershipFollowsWrites(t *testing.T) {
	tb := New()
	mustCreate := func(id string, ms ...command.GroupMember) {
		t.Helper()
		if _, err := tb.Create(id, ms, "admin", now, registered); err != nil {
			t.Fatal(err)
		}
	}
	mustCreate("a", worker("w1"))
	mustCreate("b", worker("w2"), group("a"))
	mustCreate("top", group("a"), group("b"))
	if got := fmt.Sprint(tb.Of("w1")); got != "[a b top]" {
		t.Fatalf("w1 belongs to %s", got)
	}
	if rec, _ := tb.Record("top"); fmt.Sprint(rec.Workers) != "[w1 w2]" {
		t.Fatalf("top's workers %v", rec.Workers)
	}
	if _, _, err := tb.Add("a", group("top"), now, registered); !errors.Is(err, stateerr.ErrCycleDetected) {
		t.Fatalf("a cycle: %v", err)
	}
	if _, err := tb.Create("self", []command.GroupMember{group("self")}, "admin", now, registered); !errors.Is(err, stateerr.ErrCycleDetected) {
		t.Fatalf("a group in itself: %v", err)
	}
	if _, _, err := tb.Add("a", worker("ghost"), now, func(string) bool { return false }); !errors.Is(err, stateerr.ErrNotFound) {
		t.Fatalf("an unregistered worker: %v", err)
	}
	if _, err := tb.Delete("a", func() error { return nil }); !errors.Is(err, stateerr.ErrConflict) {
		t.Fatalf("deleting a contained group: %v", err)
	}
	busy := errors.New("in use")
	if _, err := tb.Delete("top", func() error { return busy }); !errors.Is(err, busy) || !tb.Has("top") {
		t.Fatalf("deleting a group in use: %v", err)
	}
	if _, changed, err := tb.Remove("b", group("a"), now); err != nil || !changed {
		t.Fatalf("remove: %v %v", changed, err)
	}
	if got := fmt.Sprint(tb.Of("w1")); got != "[a top]" {
		t.Fatalf("after the removal w1 belongs to %s", got)
	}
	joined, missing := tb.Join("w3", []string{"b", "gone"}, now)
	if fmt.Sprint(joined, missing) != "[b] [gone]" || !tb.Contains("w3", "top") {
		t.Fatalf("join: %v %v", joined, missing)
	}
	tb.DropWorker("w3", now)
	if tb.Contains("w3", "b") || tb.Contains("w3", "top") {
		t.Fatal("a dropped worker still belongs")
	}
}

// A restore rebuilds the closure and refuses a group listed twice.
func TestRestore(t *testing.T) {
	gs := []*Group{{ID: "a", Members: []command.GroupMember{worker("w1")}}, {ID: "b"}}
	tb, err := Restore(gs)
	if err != nil || !tb.Contains("w1", "a") || len(tb.Copies()) != 2 {
		t.Fatalf("restore: %v", err)
	}
	if rec, _ := tb.Record("b"); rec.Group.Members == nil || rec.Workers == nil {
		t.Fatalf("an empty group restored with nil lists (they answer null, not []): %+v", rec)
	}
	if _, err := Restore([]*Group{gs[0], gs[0]}); !errors.Is(err, stateerr.ErrInvalid) {
		t.Fatalf("a group twice: %v", err)
	}
}
