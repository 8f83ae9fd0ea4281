package faults

import (
	"testing"
	"time"
)

// TestPlanOutagesAndWipes checks what newPlan draws for the quorum
// losses, wiped disks and late thaws, over many seeds: a quorum loss
// stands alone among the coordinator faults, lasts past every lease and
// steps the clocks by 30 s to 5 min; a wiped disk takes the place of the
// last coordinator fault; plans are a function of their seed.
func TestPlanOutagesAndWipes(t *testing.T) {
	const seeds = 2000
	var losses, wipes, restarts, thaws, pauses int
	for seed := range uint64(seeds) {
		p := newPlan(seed)
		if q := newPlan(seed); q.String() != p.String() {
			t.Fatalf("seed %d draws two plans: %s, then %s", seed, p, q)
		}
		var coord []fault
		for _, f := range p.Faults {
			if !f.Kind.onAgent() {
				coord = append(coord, f)
			}
			if f.Kind == faultPauseAgent {
				pauses++
				if f.ThawAfterRetry {
					thaws++
				}
			}
		}
		for i, f := range coord {
			switch f.Kind {
			case faultQuorumLoss:
				losses++
				if f.RestartAgent {
					restarts++
				}
				if len(coord) != 1 {
					t.Errorf("seed %d: a quorum loss with other coordinator faults: %s", seed, p)
				}
				if f.For < 2200*time.Millisecond || f.For > 3*time.Second || f.Step < 30*time.Second || f.Step > 300*time.Second || f.Step%time.Second != 0 {
					t.Errorf("seed %d: quorum loss down %v (want 2.2-3 s, past every lease), clocks +%v (want 30 s to 5 min)", seed, f.For, f.Step)
				}
			case faultWipeNode:
				wipes++
				if i != len(coord)-1 {
					t.Errorf("seed %d: a wiped disk before another coordinator fault: %s", seed, p)
				}
			}
		}
	}
	share := func(n, of int) float64 { return float64(n) / float64(of) }
	if s := share(losses, seeds); s < quorumLossShare-0.05 || s > quorumLossShare+0.05 {
		t.Errorf("quorum losses in %.2f of the plans, want about %.2f", s, quorumLossShare)
	}
	if s := share(wipes, seeds); s < wipeShare-0.05 || s > wipeShare+0.05 {
		t.Errorf("wiped disks in %.2f of the plans, want about %.2f", s, wipeShare)
	}
	if s := share(restarts, losses); s < 0.4 || s > 0.6 {
		t.Errorf("agent restarts in %.2f of the quorum losses, want about half", s)
	}
	if s := share(thaws, pauses); s < 0.4 || s > 0.6 {
		t.Errorf("thaws after the retry in %.2f of the pauses, want about half", s)
	}
}
