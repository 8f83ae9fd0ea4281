package state

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// The queue lists the teams in fair-share order and each team's tasks in
// the order the matcher takes them, with reasons; one team's view holds
// only that team; an unknown team is not found; the limit bounds the
// tasks listed, not the count.
func TestQueueView(t *testing.T) {
	s := twoTeams(t, 2)
	mustApply(t, s, teamJob("a-old", "a", 3, 1, 0), teamJob("a-urgent", "a", 1, 1, 9))
	p := &placer{t: t, s: s, now: at(2)}
	p.fill("w1") // a takes both GPUs: a-urgent, then a-old-a
	mustApply(t, s, teamJob("b-new", "b", 2, 1, 0))
	q, err := s.Queue("", 10)
	if err != nil {
		t.Fatal(err)
	}
	var teams []string
	for _, tq := range q {
		teams = append(teams, tq.Team)
	}
	if !slices.Equal(teams, []string{"b", "a"}) {
		t.Fatalf("teams in order %v, want b (0 in use) before a (2)", teams)
	}
	a := q[1]
	if a.Queued != 2 || a.CentiGPUsInUse != 200 || len(a.Tasks) != 2 || a.Tasks[0].TaskID != "a-old-b" || a.Tasks[0].CentiGPUs != 100 {
		t.Fatalf("team a: %+v", a)
	}
	if !strings.HasPrefix(a.Tasks[0].Reason, "fair share: behind team b") {
		t.Fatalf("a's reason %q", a.Tasks[0].Reason)
	}
	only, err := s.Queue("a", 1)
	if err != nil || len(only) != 1 || only[0].Team != "a" || len(only[0].Tasks) != 1 || only[0].Queued != 2 {
		t.Fatalf("team a's queue, limit 1: %+v %v", only, err)
	}
	if _, err := s.Queue("nobody", 10); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown team: %v", err)
	}
	mustApply(t, s, command.CancelJob{JobID: "b-new", By: "admin", Now: at(3)})
	if q, _ := s.Queue("b", 10); len(q) != 0 {
		t.Fatalf("b's queue after its job was cancelled: %+v", q)
	}
}
