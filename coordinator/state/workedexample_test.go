package state

import (
	"slices"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// docs/scheduling.md's worked example: two workers of 4 GPUs, vision
// (weight 2, quota 4, borrow limit 2) and speech (weight 1, quota 2, no
// limit), ten one-GPU tasks each: the placements go speech, vision,
// vision, speech, vision, vision, speech, vision, and speech's waiting
// tasks say they are behind vision.
func TestWorkedExample(t *testing.T) {
	s := New()
	addWorkers(t, s, 4, "w1", "w2")
	mustApply(t, s,
		command.CreateTeam{Name: "vision", Settings: borrowing(200, 400, limit(200)), Now: at(0)},
		command.CreateTeam{Name: "speech", Settings: borrowing(100, 200, nil), Now: at(0)},
		teamJob("v", "vision", 10, 1, 0), teamJob("s", "speech", 10, 1, 0))
	p := &placer{t: t, s: s, now: at(2)}
	got := jobsOf(s, p.fill("w1", "w2"))
	if want := []string{"s", "v", "v", "s", "v", "v", "s", "v"}; !slices.Equal(got, want) {
		t.Fatalf("placements %v, want %v", got, want)
	}
	rec, _ := s.Job("s")
	if want := "fair share: behind team vision (5 GPUs in use at weight 2; team speech 3 at weight 1)"; rec.PendingReason != want {
		t.Fatalf("speech's reason %q, want %q", rec.PendingReason, want)
	}
	if rec, _ := s.Job("v"); rec.PendingReason != "" {
		t.Fatalf("vision's reason %q, want none", rec.PendingReason)
	}
}
