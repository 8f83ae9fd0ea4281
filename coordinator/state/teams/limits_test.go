package teams

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/stateerr"
)

func TestLimitsReadTheSettings(t *testing.T) {
	tab := New()
	borrow := int64(200)
	if _, err := tab.Create("ml", command.TeamSettings{WeightCenti: 300, QuotaCentiGPUs: 400, BorrowLimitCenti: &borrow}, "admin", time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := tab.Create("free", command.TeamSettings{WeightCenti: DefaultWeightCenti, QuotaCentiGPUs: 100}, "admin", time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		team string
		want Limits
	}{
		{"ml", Limits{Name: "ml", Quota: 400, Ceiling: 600, Bounded: true, Weight: 300}},
		{"free", Limits{Name: "free", Quota: 100, Weight: DefaultWeightCenti}},
		{"gone", Limits{Name: "gone", Weight: DefaultWeightCenti}},
	} {
		if got := tab.Limits(c.team); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.team, got, c.want)
		}
	}
}

func TestRoomFor(t *testing.T) {
	bounded := Limits{Name: "ml", Quota: 400, Ceiling: 600, Bounded: true, Weight: 100}
	open := Limits{Name: "free", Quota: 100, Weight: 100}
	for _, c := range []struct {
		name        string
		l           Limits
		inUse, need int64
		preemptible bool
		refused     string // a word of the reason; "" when there is room
	}{
		{"within the quota", bounded, 300, 100, false, ""},
		{"past the quota, not preemptible", bounded, 300, 200, false, "may not be preempted"},
		{"borrowing within the ceiling", bounded, 500, 100, true, ""},
		{"past the ceiling", bounded, 500, 200, true, "borrow limit"},
		{"no borrow limit: no ceiling", open, 10_000, 100, true, ""},
		{"no borrow limit, not preemptible", open, 100, 100, false, "may not be preempted"},
		{"nothing asked", bounded, 10_000, 0, false, ""},
	} {
		err := c.l.RoomFor(c.inUse, c.need, c.preemptible)
		why := c.l.RoomReason(c.inUse, c.need, c.preemptible)
		switch {
		case c.refused == "" && (err != nil || why != ""):
			t.Errorf("%s: refused (%v; %q)", c.name, err, why)
		case c.refused != "" && (!errors.Is(err, ErrRoom) || !errors.Is(err, stateerr.ErrConflict) || !strings.Contains(why, c.refused)):
			t.Errorf("%s: %v; %q, want a refusal saying %q", c.name, err, why, c.refused)
		}
	}
	if !bounded.Full(600) || bounded.Full(599) || open.Full(1_000_000) {
		t.Error("Full: a bounded team is full at its ceiling, an unbounded one never")
	}
}
