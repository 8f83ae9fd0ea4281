package audit

import (
	"fmt"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

var t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// Both rings share one sequence; a read merges them by it and filters.
func TestRingsShareOneSequence(t *testing.T) {
	var l Log
	for i, k := range []string{"token.created", "auth.refused", "group.created", "enrollment.refused", "token.revoked"} {
		l.Record(command.AuditEvent{Time: t0.Add(time.Duration(i) * time.Second), Kind: k})
	}
	l.RecordRefusal(command.AuditEvent{Time: t0.Add(5 * time.Second), Kind: "token.created"}) // a coalesced claim
	if e, r := sizes(&l); e != 3 || r != 3 {
		t.Fatalf("rings hold %d and %d, want 3 and 3", e, r)
	}
	for _, c := range []struct {
		f    Filter
		want string
	}{
		{Filter{}, "[1 2 3 4 5 6]"},
		{Filter{After: 1, Limit: 3}, "[2 3 4]"},
		{Filter{Kinds: []string{"token"}}, "[1 5 6]"},
		{Filter{Kinds: []string{"auth", "enrollment"}}, "[2 4]"},
		{Filter{Since: t0.Add(2 * time.Second), Until: t0.Add(4 * time.Second)}, "[3 4]"},
	} {
		var got []uint64
		for _, ev := range l.Select(c.f) {
			got = append(got, ev.Seq)
		}
		if fmt.Sprint(got) != c.want {
			t.Errorf("%+v: %v, want %s", c.f, got, c.want)
		}
	}
}

// A ring keeps its newest events, trimmed in steps, and a frozen view
// does not see later appends.
func TestRingsAreBounded(t *testing.T) {
	var l Log
	for range MaxRefusals + MaxRefusals/8 + 1 {
		l.Record(command.AuditEvent{Kind: "auth.refused"})
	}
	_, refusals, seq := l.Frozen()
	if len(refusals) != MaxRefusals || refusals[len(refusals)-1].Seq != seq {
		t.Fatalf("%d refusals kept, last %d of %d", len(refusals), refusals[len(refusals)-1].Seq, seq)
	}
	l.Record(command.AuditEvent{Kind: "auth.refused"})
	if len(refusals) != MaxRefusals {
		t.Fatal("a frozen view grew")
	}
	r := Restore(refusals, nil, seq)
	if e, n := sizes(&r); e != 0 || n != MaxRefusals {
		t.Fatalf("restored rings %d and %d", e, n)
	}
}

// sizes is how many events each of l's rings holds.
func sizes(l *Log) (events, refusals int) {
	e, r, _ := l.Frozen()
	return len(e), len(r)
}
